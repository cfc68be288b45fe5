// One recorded connection's replay (connection_replay.h).
#include "connection_replay.h"

#include <chrono>

#include "docguard/codec/bson_elements.h"
#include "docguard/recording/recorded_shape.h"
#include "docguard/tools/document_example.h"

namespace docguard::tools {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxShownJson = 8192;

mongoc_read_mode_t read_mode(const std::string& mode) {
  if (mode == "secondary") return MONGOC_READ_SECONDARY;
  if (mode == "secondaryPreferred") return MONGOC_READ_SECONDARY_PREFERRED;
  if (mode == "primaryPreferred") return MONGOC_READ_PRIMARY_PREFERRED;
  if (mode == "nearest") return MONGOC_READ_NEAREST;
  return MONGOC_READ_PRIMARY;
}

// The report's example of a request or reply: values only when the user asks for them, since a
// recording holds customers' data.
void append_shown(std::string& out, const codec::BsonView& doc, bool show_values) {
  if (out.size() >= kMaxShownJson || doc.empty()) return;
  if (!out.empty()) out += "\n";
  out += document_example(doc, show_values, kMaxShownJson);
}

}  // namespace

void PendingStep::set_reply(std::vector<uint8_t> bytes, uint64_t offset, bool gated) {
  {
    std::lock_guard lock(mu_);
    reply_ = std::move(bytes);
    reply_offset_ = offset;
    gated_ = gated;
    known_ = true;
  }
  cv_.notify_all();
}

void PendingStep::no_reply() {
  {
    std::lock_guard lock(mu_);
    if (known_) return;
    known_ = true;
  }
  cv_.notify_all();
}

bool PendingStep::wait_reply() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return known_; });
  return !reply_.empty();
}

void CausalGate::assign() {
  std::lock_guard lock(mu_);
  ++assigned_;
}

void CausalGate::complete() {
  {
    std::lock_guard lock(mu_);
    ++completed_;
  }
  cv_.notify_all();
}

void CausalGate::wait_all() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return completed_ >= assigned_; });
}

std::shared_ptr<OpenOperation> OpenOperations::find(int64_t recorded_cursor) {
  std::lock_guard lock(mu_);
  const auto it = open_.find(recorded_cursor);
  return it == open_.end() ? nullptr : it->second;
}

void OpenOperations::put(int64_t recorded_cursor, std::shared_ptr<OpenOperation> op) {
  std::lock_guard lock(mu_);
  open_[recorded_cursor] = std::move(op);
}

std::shared_ptr<OpenOperation> OpenOperations::take(int64_t recorded_cursor) {
  std::lock_guard lock(mu_);
  const auto it = open_.find(recorded_cursor);
  if (it == open_.end()) return nullptr;
  auto op = std::move(it->second);
  open_.erase(it);
  return op;
}

std::vector<std::shared_ptr<OpenOperation>> OpenOperations::take_all() {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<OpenOperation>> out;
  for (auto& [id, op] : open_) out.push_back(std::move(op));
  open_.clear();
  return out;
}

void ConnectionReplay::push(std::shared_ptr<PendingStep> step) {
  {
    std::lock_guard lock(mu_);
    mailbox_.push_back(std::move(step));
  }
  cv_.notify_one();
}

std::shared_ptr<PendingStep> ConnectionReplay::pop() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !mailbox_.empty(); });
  auto step = std::move(mailbox_.front());
  mailbox_.pop_front();
  return step;
}

void ConnectionReplay::run() {
  while (auto step = pop()) {
    replay(*step);
    shared_.progress.done.fetch_add(1, std::memory_order_relaxed);
    // The reply was compared (or there was none): a request recorded after it may go now.
    if (step->gated()) shared_.gate.complete();
  }
}

void ConnectionReplay::replay(PendingStep& step) {
  const ReplayOptions& options = shared_.options;
  if (shared_.abort.stopped()) {
    // Handed over before the replay stopped: not sent either.
    ++counts.skipped["aborted"];
    if (!step.kind.more_to_come) step.wait_reply();
    return;
  }
  const std::span<const int32_t> refused =
      options.as_sent_by_client ? std::span<const int32_t>() : step.refused_statements;
  ReplayRequest request = rewrite_request(step.request, shared_.cursors, refused);
  request.is_write = step.kind.is_write;
  if (request.action != RequestAction::kSend) {
    ++counts.skipped[skip_reason_of(request.action)];
    if (!step.kind.more_to_come) step.wait_reply();
    return;
  }
  // A getMore continues the operation that opened its cursor, on whichever connection.
  std::shared_ptr<OpenOperation> open;
  if (request.name == "getMore") open = shared_.open.find(request.recorded_cursor);
  std::unique_lock<std::mutex> lock;
  if (open) {
    lock = std::unique_lock(open->mu);
    if (open->folded) {
      lock.unlock();
      open.reset();
    }
  }
  if (!open) {
    open = std::make_shared<OpenOperation>();
    lock = std::unique_lock(open->mu);
    const recording::RequestShape shape = recording::shape_of_request(step.request);
    open->op.shape = shape.text;
    open->op.sorted = shape.sorted;
    open->op.not_comparable = step.kind.not_comparable;
  }
  compare(step, request, *open);
  // The recorded cursor id now means the live one, on the server that holds it; the operation
  // stays open until both cursors are done.
  ComparedOperation& op = open->op;
  if (op.recorded.cursor_id != 0 && op.live.cursor_id != 0) {
    shared_.cursors.put(op.recorded.cursor_id, {op.live.cursor_id, request.server_id});
    shared_.open.put(op.recorded.cursor_id, open);
    return;
  }
  if (request.name == "getMore") (void)shared_.open.take(request.recorded_cursor);
  if (request.name == "killCursors" && request.recorded_cursor != 0) {
    if (auto killed = shared_.open.take(request.recorded_cursor); killed && killed != open) {
      const std::lock_guard killed_lock(killed->mu);
      if (!killed->folded) {
        killed->folded = true;
        shared_.tally.add(std::move(killed->op));
      }
    }
  }
  open->folded = true;
  shared_.tally.add(std::move(op));
}

// Sends the request and adds both answers to the operation (its lock held).
void ConnectionReplay::compare(PendingStep& step, ReplayRequest& request, OpenOperation& open) {
  const ReplayOptions& options = shared_.options;
  ComparedOperation& op = open.op;
  append_shown(op.request_json, request.command.view(), options.show_values);
  codec::ScopedBson live;
  std::string failure;
  const auto started = Clock::now();
  const bool answered = send(request, live, failure);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
  ++counts.sent;
  auto& [sent, ok] = counts.commands[request.name];
  ++sent;
  // Whatever came back, the recorded reply is the reader's to hand over.
  const bool recorded = !step.kind.more_to_come && step.wait_reply();
  bool live_ok = false;
  if (!answered) {
    ++counts.failed;
    if (op.live_error.empty()) op.live_error = failure;
  } else {
    codec::BsonElements status(live.get());
    live_ok = status.find("ok") && status.as_double() == 1.0;
    ok += live_ok;
  }
  // An error for --abort-error-rate: no answer, or a failure where the recorded cluster had none
  // (a refusal, write errors, fewer documents written).
  const bool failed =
      !answered || (recorded && replayed_reply_failed(reply_document(step.reply()), live.view(),
                                                      request.is_write));
  shared_.abort.add(failed, answered, static_cast<uint64_t>(micros));
  // An unacknowledged write (moreToCome), or a request whose reply the recording ended
  // before: nothing to compare the live reply with.
  if (!recorded) return;
  std::vector<std::string> ignore = options.ignore;
  if (const auto found = options.ignore_by_shape.find(op.shape);
      found != options.ignore_by_shape.end()) {
    ignore.insert(ignore.end(), found->second.begin(), found->second.end());
  }
  const codec::BsonView recorded_reply = reply_document(step.reply());
  add_reply(op.recorded, recorded_reply, ignore);
  op.recorded_micros.push_back(step.reply_offset() - step.request_offset);
  append_shown(op.recorded_reply_json, recorded_reply, options.show_values);
  if (!answered) {
    op.live.present = false;
    return;
  }
  add_reply(op.live, live.view(), ignore);
  op.live_micros.push_back(static_cast<uint64_t>(micros));
  append_shown(op.live_reply_json, live.view(), options.show_values);
  if (op.field_difference.empty() && op.not_comparable.empty()) {
    op.field_difference =
        first_field_difference(recorded_reply, live.view(), op.sorted, options.show_values, ignore);
  }
}

bool ConnectionReplay::send(ReplayRequest& request, codec::ScopedBson& reply,
                            std::string& failure) {
  ReplayClient* client = &shared_.clients.slot(slot_);
  mongoc_client_session_t* session = nullptr;
  if (!request.lsid.empty()) {
    const ReplayClients::Bound bound = shared_.clients.session_for(
        {reinterpret_cast<const char*>(request.lsid.data), request.lsid.size}, slot_, failure);
    if (bound.session == nullptr) {
      bson_init(reply.get());
      return false;
    }
    client = bound.client;
    session = bound.session;
  }
  std::lock_guard lock(client->mu);
  std::unique_ptr<mongoc_read_prefs_t, decltype(&mongoc_read_prefs_destroy)> prefs(
      mongoc_read_prefs_new(read_mode(request.read_preference)), &mongoc_read_prefs_destroy);
  bson_error_t error;
  uint32_t server_id = request.server_id;
  if (server_id == 0) {
    // A write goes to the primary: libmongoc takes no read preference with it.
    mongoc_server_description_t* server = mongoc_client_select_server(
        client->client, request.is_write, request.is_write ? nullptr : prefs.get(), &error);
    if (server == nullptr) {
      bson_init(reply.get());
      failure = error.message;
      return false;
    }
    server_id = mongoc_server_description_id(server);
    mongoc_server_description_destroy(server);
  }
  codec::ScopedBson opts;
  BSON_APPEND_INT32(opts.get(), "serverId", static_cast<int32_t>(server_id));
  if (session != nullptr && !mongoc_client_session_append(session, opts.get(), &error)) {
    bson_init(reply.get());
    failure = error.message;
    return false;
  }
  const char* db = request.database.empty() ? "admin" : request.database.c_str();
  const bool ok = mongoc_client_command_with_opts(client->client, db, request.command.get(),
                                                  request.is_write ? nullptr : prefs.get(),
                                                  opts.get(), reply.get(), &error);
  if (!ok && reply.get()->len <= 5) {
    failure = error.message;
    return false;
  }
  // The live cursor lives where this ran: a later getMore must go there.
  request.server_id = server_id;
  return true;
}

}  // namespace docguard::tools
