#include "command_line.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>

#include "docguard/advisor/finding.h"
#include "docguard/proxy/admin_endpoints.h"

namespace docguard::app {
namespace {

constexpr const char* kDescription =
    "A MongoDB wire-protocol proxy that decodes every OP_MSG and enforces document design rules.\n"
    "Without a subcommand docguard runs the proxy with the options below.";

// The proxy's valued options, each kept as written: the settings reader checks the values
// (settings::build_config), so their errors name the option the same way the file's name keys.
struct ProxyOption {
  const char* name;  // without "--"
  const char* type;
  const char* help;
};
constexpr ProxyOption kProxyOptions[] = {
    {"upstream", "URI",
     "the cluster: any connection string a driver accepts, e.g. mongodb://HOST:PORT, "
     "mongodb://a,b,c/?replicaSet=rs0, mongodb+srv://NAME (default mongodb://127.0.0.1:27017); "
     "?tls=true&tlsCAFile=FILE for TLS"},
    {"admin", "HOST:PORT", "admin HTTP listener (default 127.0.0.1:9216); its endpoints are below"},
    {"config", "FILE", "YAML file with proxy settings and rules; options override it"},
    {"threads", "N", "io threads (default: one per core)"},
    {"tls-cert", "FILE", "serve clients over TLS with this certificate chain (PEM)"},
    {"tls-key", "FILE", "the certificate's private key (PEM)"},
    {"tls-ca", "FILE", "require client certificates signed by this CA (PEM)"},
    {"log-format", "text|json", "log line format on stderr (default text)"},
    {"log-level", "LEVEL", "trace, debug, info, warn, error, critical, off (default info)"},
};

void add_cluster_options(CLI::App& command, advisor::ScanArguments& scan) {
  command
      .add_option("--sample", scan.sample,
                  "read about N documents per collection of a cluster (default: every document)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--credentials-file", scan.credentials_file,
                  "`user: NAME` and `password: SECRET` lines, or a connection string, for a "
                  "cluster")
      ->type_name("FILE");
  command.add_flag("--quiet,-q", scan.quiet, "no progress lines on stderr");
}

void add_scan(CLI::App& app, CommandLine& line, std::string& format, std::string& fail_on) {
  CLI::App* scan = app.add_subcommand(
      "scan",
      "The design advisor's findings for a mongodump or a live cluster (read as mongodump reads "
      "it, from a secondary when there is one); with --config, the file's rules applied to every "
      "document. Exit 1 when a finding reaches --fail-on, 2 on errors.");
  scan->add_option("source", line.scan.source,
                   "mongodump output (a directory, an --archive file, gzipped or not, or one "
                   ".bson file), or a mongodb:// or mongodb+srv:// URI")
      ->type_name("PATH|URI")
      ->required();
  scan->add_option("--config", line.scan.config_path, "the `advisor:` thresholds and the rules")
      ->type_name("FILE");
  scan->add_option("--format", format, "the report's format (default text)")
      ->type_name("text|json|html")
      ->check(CLI::IsMember({"text", "json", "html"}));
  scan->add_option("--fail-on", fail_on, "exit 1 when a finding is at least this severe")
      ->type_name("warn|block")
      ->check(CLI::IsMember({"warn", "block"}));
  scan->add_option("--db", line.scan.db, "only this database of a cluster")->type_name("NAME");
  scan->add_option("--collection", line.scan.collection, "only this collection of a cluster")
      ->type_name("NAME");
  add_cluster_options(*scan, line.scan);
  scan->callback([&line] { line.run = CommandLine::Run::kScan; });
}

void add_validator(CLI::App& app, CommandLine& line) {
  CLI::App* validator = app.add_subcommand(
      "validator",
      "The collMod with a $jsonSchema validator a collection's documents give. Exit 2 on errors.");
  validator->add_option("source", line.scan.source, "mongodump output or a mongodb:// URI")
      ->type_name("PATH|URI")
      ->required();
  validator
      ->add_option("namespace", line.validator_namespace,
                   "db.collection, or the collection when its name is unambiguous")
      ->type_name("NAMESPACE")
      ->required();
  validator->add_flag("--apply", line.validator_apply,
                      "then run the collMod on the cluster (a mongodb:// URI), after printing it "
                      "and the census of its validator over the documents read");
  add_cluster_options(*validator, line.scan);
  validator->callback([&line] { line.run = CommandLine::Run::kValidator; });
}

void add_whatif(CLI::App& app, CommandLine& line) {
  tools::WhatifArguments& w = line.whatif;
  CLI::App* whatif = app.add_subcommand(
      "whatif",
      "Judges a traffic recording with a candidate configuration's rules as a live docguard "
      "would have. Exit 1 when some request would be refused, 2 on errors.");
  whatif->add_option("--config", w.config, "the candidate configuration")
      ->type_name("FILE")
      ->required();
  whatif->add_option("--recording", w.recording, "the recording's directory")
      ->type_name("DIR")
      ->required();
  whatif->add_option("--format", w.format, "the report's format (default text)")
      ->type_name("text|json|html")
      ->check(CLI::IsMember({"text", "json", "html"}));
  whatif->add_option("--output", w.output, "write the report there (default: standard output)")
      ->type_name("FILE");
  whatif->add_flag("--show-values", w.show_values, "examples show values, not only types");
  whatif
      ->add_option("--facts-from", w.facts_from,
                   "a mongodump or a cluster whose indexes stand in for introspection's")
      ->type_name("DUMP|URI");
  whatif->add_flag("--accept-torn-tail", w.accept_torn_tail,
                   "a data file without a checksum may end cut short");
  whatif->callback([&line] { line.run = CommandLine::Run::kWhatif; });
}

// A CLI11 check: `accepts` says whether the text reads; `what` says what the option takes.
CLI::Validator accepting(std::function<bool(const std::string&)> accepts, const char* what) {
  return CLI::Validator(
      [accepts = std::move(accepts), what](std::string& text) {
        return accepts(text) ? std::string() : std::string("takes ") + what;
      },
      "", what);
}

// Stopping early, replaying part of a recording, the dry run and the longest wait.
void add_replay_safety(CLI::App* replay, tools::ReplayOptions& r) {
  replay
      ->add_option("--abort-error-rate", r.abort_error_rate,
                   "stop when this share of the window's requests failed (default 0.5)")
      ->type_name("R")
      ->check(accepting(
          [](const std::string& text) {
            double rate = 0;
            return tools::parse_duration(text, rate) && text.back() >= '0' && text.back() <= '9' &&
                   rate <= 1;
          },
          "a share above 0, at most 1"));
  replay
      ->add_option("--abort-window", r.abort_window,
                   "the last N requests the error rate and latency are judged over (default 100)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  replay
      ->add_option("--abort-latency", r.abort_latency_ms,
                   "stop when the window's median replayed latency is above MS (default: off)")
      ->type_name("MS")
      ->check(CLI::PositiveNumber);
  for (const auto& [name, bound] :
       {std::pair{"--from", &r.selection.from}, std::pair{"--to", &r.selection.to}}) {
    replay
        ->add_option(name, *bound,
                     std::string("replay requests recorded ") +
                         (name[2] == 'f' ? "from" : "up to") +
                         " this time: seconds since the recording's start, or an RFC 3339 time")
        ->type_name("SECONDS|TIME")
        ->check(accepting(
            [](const std::string& text) {
              double value = 0;
              bool absolute = false;
              return tools::parse_time_bound(text, value, absolute);
            },
            "seconds or an RFC 3339 time"));
  }
  replay->add_option("--app", r.selection.apps, "replay this app's requests; repeat for more")
      ->type_name("NAME")
      ->allow_extra_args(false);
  replay
      ->add_option("--namespace", r.selection.namespaces,
                   "replay requests on this namespace (db.coll, db.* or db); repeat for more")
      ->type_name("NS")
      ->allow_extra_args(false);
  replay->add_option("--command", r.selection.commands, "replay this command; repeat for more")
      ->type_name("NAME")
      ->allow_extra_args(false);
  replay
      ->add_option("--shape", r.selection.shapes,
                   "replay requests of this shape (its text as the report names it); repeat")
      ->type_name("TEXT")
      ->allow_extra_args(false);
  replay->add_flag("--dry-run", r.dry_run,
                   "connect to nothing: print what would be sent or skipped, and the counts");
  replay
      ->add_option_function<std::string>(
          "--max-duration",
          [&r](const std::string& text) {
            (void)tools::parse_duration(text, r.max_duration_seconds);
          },
          "refuse a replay expected to take longer (default 24h)")
      ->type_name("90s|15m|24h")
      ->check(accepting(
          [](const std::string& text) {
            double seconds = 0;
            return tools::parse_duration(text, seconds);
          },
          "a duration such as 90s, 15m or 24h"));
}

void add_replay(CLI::App& app, CommandLine& line, std::string& recording, std::string& report_dir,
                std::string& speed, std::vector<std::string>& ignore) {
  tools::ReplayOptions& r = line.replay;
  CLI::App* replay = app.add_subcommand(
      "replay",
      "Runs a recording against another cluster, paced as recorded, and compares the answers "
      "per query shape (report.json and report.html). Exit 1 when a shape differs, 2 on errors "
      "and refusals (the recording's own source, longer than --max-duration), 3 when the "
      "target failed and the replay stopped early.");
  replay->add_option("--recording", recording, "the recording's directory")
      ->type_name("DIR")
      ->required();
  replay->add_option("--target", r.target, "the cluster to replay against")
      ->type_name("URI")
      ->required();
  replay->add_option("--speed", speed, "recorded time / replay time; max: no waiting (default 1)")
      ->type_name("1|4|max")
      ->check(CLI::Validator(
          [](std::string& text) {
            double value = 0;
            return tools::parse_speed(text, value) ? std::string()
                                                   : std::string("takes a number above 0 or max");
          },
          "", "speed"));
  replay->add_flag("--read-only", r.read_only, "send no writes");
  replay->add_option("--report-dir", report_dir, "where the reports go (default .)")
      ->type_name("DIR");
  replay->add_option("--max-connections", r.max_connections, "recorded connections open at once")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  replay->add_option("--max-sessions", r.max_sessions, "live sessions, one per recorded lsid")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  replay->add_flag("--allow-writes-out", r.allow_writes_out,
                   "replay aggregates with $out or $merge (and their explain)");
  replay->add_flag("--as-sent-by-client", r.as_sent_by_client,
                   "replay what clients sent, docguard's refusals included");
  replay
      ->add_option("--ignore", ignore,
                   "a path left out of compared documents, everywhere or for one shape "
                   "(SHAPE::PATH); repeat for more")
      ->type_name("[SHAPE::]PATH")
      ->allow_extra_args(false);
  replay->add_flag("--show-values", r.show_values, "differences show values, not only types");
  replay->add_flag("--accept-torn-tail", r.accept_torn_tail,
                   "a data file without a checksum may end cut short");
  replay
      ->add_option("--baseline", r.baseline,
                   "a copy of production replayed against as well: what differs there too is "
                   "noise")
      ->type_name("URI");
  add_replay_safety(replay, r);
  replay->callback([&line] { line.run = CommandLine::Run::kReplay; });
}

}  // namespace

CommandLine read_command_line(int argc, const char* const* argv, std::ostream& out,
                              std::ostream& err) {
  CommandLine line;
  CLI::App app(kDescription, "docguard");
  app.require_subcommand(0, 1);
  app.footer(
      "admin endpoints (all but /healthz and /readyz need the admin token as a bearer token "
      "when one is set: admin.token_file, admin.token, or DOCGUARD_ADMIN_TOKEN_FILE or "
      "DOCGUARD_ADMIN_TOKEN in the environment; off loopback one is required unless "
      "admin.allow_without_token; a POST takes a JSON body or none; a Host other than an IP "
      "address, localhost or admin.allowed_hosts is refused, and so is another site's Origin "
      "but by /healthz and /readyz):\n" +
      proxy::admin_endpoints_help());

  std::vector<std::string> listen;
  app.add_option("--listen", listen,
                 "where clients connect (default 127.0.0.1:27018); unix:PATH.sock for a Unix "
                 "domain socket (mode 0660); repeat for several, e.g. TCP and a socket")
      ->type_name("HOST:PORT")
      ->allow_extra_args(false);
  std::string values[std::size(kProxyOptions)];
  CLI::Option* given[std::size(kProxyOptions)];
  for (size_t i = 0; i < std::size(kProxyOptions); ++i) {
    given[i] =
        app.add_option(std::string("--") + kProxyOptions[i].name, values[i], kProxyOptions[i].help)
            ->type_name(kProxyOptions[i].type);
  }
  std::string check_config_file;
  CLI::Option* check_config =
      app.add_option("--check-config", check_config_file,
                     "validate the configuration (FILE, or --config's) and exit: 0 valid, 1 not")
          ->type_name("[FILE]")
          ->expected(0, 1);
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");

  std::string scan_format, fail_on, recording, report_dir, speed;
  std::vector<std::string> ignore;
  add_scan(app, line, scan_format, fail_on);
  add_validator(app, line);
  add_whatif(app, line);
  add_replay(app, line, recording, report_dir, speed, ignore);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    line.run = CommandLine::Run::kExit;
    line.exit_code = app.exit(help, out, err);
    return line;
  } catch (const CLI::ParseError& refused) {
    const bool subcommand = !app.get_subcommands().empty();
    err << "docguard" << (subcommand ? " " + app.get_subcommands().front()->get_name() : "") << ": "
        << refused.what() << "\n(see docguard "
        << (subcommand ? app.get_subcommands().front()->get_name() + " " : "") << "--help)\n";
    line.run = CommandLine::Run::kExit;
    line.exit_code = subcommand ? 2 : 1;
    return line;
  }
  if (version) {
    out << "docguard " << DOCGUARD_VERSION << "\n";
    line.run = CommandLine::Run::kExit;
    return line;
  }
  line.proxy.listen = listen;
  for (size_t i = 0; i < std::size(kProxyOptions); ++i) {
    if (given[i]->count() > 0) line.proxy.values[kProxyOptions[i].name] = values[i];
  }
  if (check_config->count() > 0) {
    line.proxy.check_config = true;
    if (!check_config_file.empty()) line.proxy.values["config"] = check_config_file;
  }
  if (!scan_format.empty()) line.scan.format = *advisor::kReportFormatNames.value(scan_format);
  if (!fail_on.empty()) {
    line.scan.fail_on = fail_on == "block" ? advisor::Severity::kBlock : advisor::Severity::kWarn;
  }
  line.replay.recording = recording;
  if (!report_dir.empty()) line.replay.report_dir = report_dir;
  if (!speed.empty()) (void)tools::parse_speed(speed, line.replay.speed);
  for (const std::string& path : ignore) tools::add_ignored_path(line.replay, path);
  return line;
}

}  // namespace docguard::app
