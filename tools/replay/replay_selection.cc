// Replaying part of a recording (replay_selection.h), and the option values it reads.
#include "replay_selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "docguard/codec/bson_elements.h"
#include "docguard/recording/recorded_shape.h"
#include "docguard/recording/recording_namespace.h"
#include "docguard/tools/replay_request.h"

namespace docguard::tools {

namespace {

bool read_number(std::string_view text, double& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && std::isfinite(out) && out >= 0;
}

bool read_digits(std::string_view text, size_t at, size_t n, int& out) {
  if (at + n > text.size()) return false;
  out = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int64_t>(era) * 146097 + doe - 719468;
}

// "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)" -> seconds since the epoch.
bool read_rfc3339(std::string_view t, double& seconds) {
  int y, mo, d, h, mi, s;
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' ||
      (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || t[13] != ':' || t[16] != ':' ||
      !read_digits(t, 0, 4, y) || !read_digits(t, 5, 2, mo) || !read_digits(t, 8, 2, d) ||
      !read_digits(t, 11, 2, h) || !read_digits(t, 14, 2, mi) || !read_digits(t, 17, 2, s) ||
      mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
    return false;
  }
  size_t at = 19;
  double fraction = 0;
  if (at < t.size() && t[at] == '.') {
    double scale = 0.1;
    ++at;
    const size_t digits_at = at;
    while (at < t.size() && t[at] >= '0' && t[at] <= '9') {
      fraction += scale * (t[at] - '0');
      scale /= 10;
      ++at;
    }
    if (at == digits_at) return false;
  }
  int offset_minutes = 0;
  if (at < t.size() && (t[at] == 'Z' || t[at] == 'z')) {
    ++at;
  } else if (at < t.size() && (t[at] == '+' || t[at] == '-')) {
    int oh, om;
    if (at + 6 != t.size() || t[at + 3] != ':' || !read_digits(t, at + 1, 2, oh) ||
        !read_digits(t, at + 4, 2, om)) {
      return false;
    }
    offset_minutes = (t[at] == '+' ? 1 : -1) * (oh * 60 + om);
    at += 6;
  } else {
    return false;
  }
  if (at != t.size()) return false;
  const int64_t of_day = int64_t{h} * 3600 + int64_t{mi} * 60 + s - int64_t{offset_minutes} * 60;
  seconds = static_cast<double>(days_from_civil(y, mo, d) * 86400 + of_day) + fraction;
  return true;
}

bool any_equal(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

uint64_t offset_of(double seconds_since_start) {
  if (seconds_since_start <= 0) return 0;
  const double micros = seconds_since_start * 1e6;
  return micros >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(micros);
}

}  // namespace

bool parse_duration(std::string_view text, double& seconds) {
  double unit = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 's':
        text.remove_suffix(1);
        break;
      case 'm':
        unit = 60;
        text.remove_suffix(1);
        break;
      case 'h':
        unit = 3600;
        text.remove_suffix(1);
        break;
      case 'd':
        unit = 86400;
        text.remove_suffix(1);
        break;
      default:
        break;
    }
  }
  double value = 0;
  if (!read_number(text, value) || value <= 0) return false;
  seconds = value * unit;
  return true;
}

bool parse_time_bound(std::string_view text, double& value, bool& absolute) {
  absolute = false;
  if (read_number(text, value)) return true;
  absolute = true;
  return read_rfc3339(text, value);
}

base::Expected<RequestSelection> RequestSelection::make(const ReplaySelection& selection,
                                                        uint64_t start_epoch_ms) {
  RequestSelection out;
  out.selection_ = selection;
  out.all_ = selection.empty();
  const double start = static_cast<double>(start_epoch_ms) / 1000.0;
  for (const auto& [text, bound, name] : {std::tuple{&selection.from, &out.from_, "--from"},
                                          std::tuple{&selection.to, &out.to_, "--to"}}) {
    if (text->empty()) continue;
    double value = 0;
    bool absolute = false;
    if (!parse_time_bound(*text, value, absolute)) {
      return base::bad_input(fmt::format(
          "{} {}: neither seconds since the recording's start nor an RFC 3339 time", name, *text));
    }
    *bound = offset_of(absolute ? value - start : value);
  }
  // A window that ends before it begins holds nothing: a mistyped bound, not a selection.
  if (!selection.from.empty() && !selection.to.empty() && out.from_ > out.to_) {
    return base::bad_input(fmt::format("--from {} --to {}: the window ends before it begins",
                                       selection.from, selection.to));
  }
  return out;
}

bool RequestSelection::matches(const recording::RecordedPacket& request) const {
  if (all_) return true;
  if (request.offset_micros < from_ || request.offset_micros > to_) return false;
  const recording::SideFacts& side = request.side;
  if (!selection_.apps.empty() && !any_equal(selection_.apps, side.app)) return false;
  if (!selection_.commands.empty() && !any_equal(selection_.commands, side.command)) return false;
  if (!selection_.namespaces.empty()) {
    const std::string ns =
        side.ns.empty() ? recording::request_namespace(request.message) : side.ns;
    if (!recording::namespace_admitted(selection_.namespaces, ns)) return false;
  }
  if (!selection_.shapes.empty()) {
    const std::string shape =
        side.shape.empty() ? recording::shape_of_request(request.message).text : side.shape;
    if (!any_equal(selection_.shapes, shape)) return false;
  }
  return true;
}

int64_t reply_cursor_id(const std::vector<uint8_t>& reply) {
  const codec::BsonView doc = reply_document(reply);
  if (doc.empty()) return 0;
  codec::BsonElements id(doc);
  return codec::find_path(doc, "cursor.id", &id) && id.holds_int() ? id.as_int64() : 0;
}

bool SelectionTracker::selects(const recording::RecordedPacket& request) {
  if (selection_.all() || request.message.size() < codec::kHeaderSize) return true;
  const int32_t id = codec::read_header(request.message.data()).request_id;
  bool selected = selection_.matches(request);
  const std::string& command = request.side.command;
  if (command == "getMore" || command == "killCursors") {
    const int64_t cursor = rewrite_request(request.message, CursorMap{}).recorded_cursor;
    if (left_out_cursors_.contains(cursor)) selected = false;
    if (selected_cursors_.contains(cursor)) selected = true;
  }
  auto& ids = selected ? selected_[request.connection] : left_out_[request.connection];
  if (ids.size() >= 256) ids.erase(ids.begin());
  ids.push_back(id);
  return selected;
}

void SelectionTracker::on_reply(const recording::RecordedPacket& reply) {
  if (selection_.all() || reply.message.size() < codec::kHeaderSize) return;
  const int32_t to = codec::read_header(reply.message.data()).response_to;
  for (auto* ids : {&left_out_[reply.connection], &selected_[reply.connection]}) {
    const auto it = std::find(ids->begin(), ids->end(), to);
    if (it == ids->end()) continue;
    ids->erase(it);
    const int64_t cursor = reply_cursor_id(reply.message);
    if (cursor == 0) return;
    auto& cursors = ids == &left_out_[reply.connection] ? left_out_cursors_ : selected_cursors_;
    if (cursors.size() > 1'000'000) cursors.clear();
    cursors.insert(cursor);
    return;
  }
}

}  // namespace docguard::tools
