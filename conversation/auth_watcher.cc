#include "docguard/conversation/auth_watcher.h"

#include <bson/bson.h>

#include "docguard/codec/bson_elements.h"

namespace docguard::conversation {

namespace {

// Longer names are not believed: a user is bounded like every other name docguard keeps.
constexpr size_t kMaxUserBytes = 1024;

// What a first message or a reply says, read in place.
struct AuthFields {
  std::string_view command;  // the first key
  std::string_view mechanism;
  std::string_view payload;  // BinData or string; points into the message
  std::string_view db;       // "db" (speculativeAuthenticate) or "dbname" (authenticate's reply)
  std::string_view user;
  double ok = 0;
  bool done = false;
  codec::BsonView speculative;  // hello's reply: its speculativeAuthenticate document
};

AuthFields fields_of(const codec::BsonView& doc) {
  AuthFields f;
  if (doc.empty()) return f;
  codec::BsonElements it(doc);
  bool first = true;
  while (it.next()) {
    const std::string_view key = it.key;
    if (first) f.command = key;
    first = false;
    if (key == "mechanism" && it.holds_utf8()) {
      f.mechanism = it.utf8();
    } else if (key == "payload") {
      uint8_t subtype = 0;
      std::string_view bytes;
      if (it.binary(&subtype, &bytes)) {
        // The old binary subtype carries its length again; libbson's reader skips it.
        if (subtype == BSON_SUBTYPE_BINARY_DEPRECATED && bytes.size() >= 4) bytes.remove_prefix(4);
        f.payload = bytes;
      } else if (it.holds_utf8()) {
        f.payload = it.utf8();
      }
    } else if ((key == "db" || key == "dbname") && it.holds_utf8()) {
      f.db = it.utf8();
    } else if (key == "user" && it.holds_utf8()) {
      f.user = it.utf8();
    } else if (key == "ok" && it.holds_number()) {
      f.ok = it.as_double();
    } else if (key == "done" && it.holds_bool()) {
      f.done = it.as_bool();
    } else if (key == "speculativeAuthenticate" && it.holds_document()) {
      f.speculative = it.container();
    }
  }
  return f;
}

}  // namespace

std::string AuthWatcher::scram_user(std::string_view payload) {
  // client-first-message = gs2-header client-first-message-bare, where gs2-header is
  // "n,," / "y,," / "p=CB,," with an optional "a=AUTHZID" between the commas.
  const size_t first = payload.find(',');
  const size_t second = first == std::string_view::npos ? first : payload.find(',', first + 1);
  if (second == std::string_view::npos) return {};
  std::string_view bare = payload.substr(second + 1);
  // An optional reserved "m=" extension, then "n=USER".
  if (bare.starts_with("m=")) {
    const size_t comma = bare.find(',');
    if (comma == std::string_view::npos) return {};
    bare.remove_prefix(comma + 1);
  }
  if (!bare.starts_with("n=")) return {};
  const std::string_view name = bare.substr(2, bare.find(',') - 2);
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '=') {
      out.push_back(name[i]);
    } else if (name.substr(i, 3) == "=2C") {
      out.push_back(',');
      i += 2;
    } else if (name.substr(i, 3) == "=3D") {
      out.push_back('=');
      i += 2;
    } else {
      return {};  // not a valid saslname
    }
  }
  return out;
}

std::string AuthWatcher::plain_user(std::string_view payload) {
  // [authzid] NUL authcid NUL passwd: the user is authcid; the password is not looked at.
  const size_t first = payload.find('\0');
  if (first == std::string_view::npos) return {};
  const size_t second = payload.find('\0', first + 1);
  if (second == std::string_view::npos) return {};
  return std::string(payload.substr(first + 1, second - first - 1));
}

AuthWatcher::Step AuthWatcher::start(const codec::BsonView& doc, std::string_view command,
                                     std::string_view db) {
  const AuthFields f = fields_of(doc);
  attempt_ = Attempt{true, {}, std::string(db)};
  if (command == "saslStart") {
    if (f.mechanism.starts_with("SCRAM-SHA-")) {
      attempt_.name = scram_user(f.payload);
    } else if (f.mechanism == "PLAIN") {
      attempt_.name = plain_user(f.payload);
    }
    return Step::kSaslStart;
  }
  if (f.mechanism == "MONGODB-X509") {
    attempt_.name = std::string(f.user);
    attempt_.x509 = true;
  }
  return Step::kAuthenticate;
}

AuthWatcher::Step AuthWatcher::on_request(const codec::CommandView& command) {
  if (command.kind == codec::CommandKind::kHello) {
    return on_legacy_hello(command.body, command.database);
  }
  if (command.kind != codec::CommandKind::kOther) return Step::kNone;
  if (command.name == "saslStart" || command.name == "authenticate") {
    return start(command.body, command.name, command.database);
  }
  if (command.name == "saslContinue") return attempt_.active ? Step::kSaslContinue : Step::kNone;
  if (command.name == "logout") return Step::kLogout;
  return Step::kNone;
}

AuthWatcher::Step AuthWatcher::on_legacy_hello(const codec::BsonView& hello, std::string_view db) {
  const AuthFields f = fields_of(hello);
  if (f.speculative.empty()) return Step::kNone;
  const AuthFields s = fields_of(f.speculative);
  if (s.command != "saslStart" && s.command != "authenticate") return Step::kNone;
  start(f.speculative, s.command, s.db.empty() ? db : s.db);
  return Step::kHello;
}

void AuthWatcher::set_certificate_user(std::string_view subject) {
  certificate_user_.clear();
  if (!subject.empty() && subject.size() <= kMaxUserBytes) {
    certificate_user_.append(subject).append("@$external");
  }
  attempt_ = Attempt{};
  user_ = certificate_user_;
}

void AuthWatcher::set_recorded_user(std::string_view user) {
  attempt_ = Attempt{};
  user_ = std::string(user);
  authenticated_ = !user_.empty();
}

bool AuthWatcher::confirm(std::string_view name, std::string_view db) {
  // `name` and `db` may point into attempt_: read before it is reset.
  const bool named = !name.empty() && name.size() <= kMaxUserBytes;
  std::string user;
  if (named) {
    user.reserve(name.size() + 1 + db.size());
    user.append(name).append("@").append(db);
  }
  // With a verified certificate an X.509 success names nobody else, and a mechanism that names
  // no user leaves the certificate's.
  if (!certificate_user_.empty() && (attempt_.x509 || !named)) user = certificate_user_;
  attempt_ = Attempt{};
  authenticated_ = true;
  return become(std::move(user));
}

bool AuthWatcher::become(std::string user) {
  if (user == user_) return false;
  user_ = std::move(user);
  return true;
}

bool AuthWatcher::on_reply(Step step, const codec::BsonView& reply) {
  const AuthFields f = fields_of(reply);
  switch (step) {
    case Step::kNone:
      return false;
    case Step::kLogout:
      if (f.ok != 1) return false;
      attempt_ = Attempt{};
      authenticated_ = false;
      return become(certificate_user_);
    case Step::kHello: {
      // Without speculativeAuthenticate in the reply the server did not take the attempt up,
      // and the driver starts over with saslStart or authenticate.
      if (f.ok != 1 || f.speculative.empty() || !attempt_.active) {
        attempt_ = Attempt{};
        return false;
      }
      const AuthFields s = fields_of(f.speculative);
      if (!s.user.empty()) {  // X.509: the reply names the user
        return confirm(s.user, s.db.empty() ? std::string_view(attempt_.db) : s.db);
      }
      if (s.done) return confirm(attempt_.name, attempt_.db);
      return false;  // saslContinue goes on
    }
    case Step::kSaslStart:
    case Step::kSaslContinue:
      if (f.ok != 1 || !attempt_.active) {
        attempt_ = Attempt{};
        return false;
      }
      if (f.done) return confirm(attempt_.name, attempt_.db);
      return false;
    case Step::kAuthenticate:
      if (f.ok != 1 || !attempt_.active) {
        attempt_ = Attempt{};
        return false;
      }
      if (!f.user.empty())
        return confirm(f.user, f.db.empty() ? std::string_view(attempt_.db) : f.db);
      return confirm(attempt_.name, attempt_.db);
  }
  return false;
}

}  // namespace docguard::conversation
