#include "docguard/proxy/session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>

#include "docguard/command/command_view.h"
#include "docguard/wire/op_msg.h"
#include "docguard/wire/op_query.h"

namespace docguard::proxy {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto kUseTuple = asio::as_tuple(use_awaitable);
// Buffers grown past this for a large message are released afterwards, so an idle
// connection holds little memory.
constexpr size_t kKeepBufferBytes = 64 * 1024;

void trim(std::vector<uint8_t>& buffer) {
  if (buffer.capacity() > kKeepBufferBytes) {
    std::vector<uint8_t>().swap(buffer);
  }
}

std::string endpoint_text(tcp::socket& s) {
  boost::system::error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec) return "unknown";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

bool is_reply_more_to_come(wire::Bytes message) {
  if (message.size() < wire::kHeaderSize + 4) return false;
  if (wire::read_header(message.data()).op_code != static_cast<int32_t>(wire::OpCode::kMsg)) {
    return false;
  }
  return (static_cast<uint32_t>(wire::load_le32(message.data() + wire::kHeaderSize)) &
          wire::op_msg_flags::kMoreToCome) != 0;
}

// An error document in the reply family of the request (OP_REPLY for OP_QUERY, else OP_MSG).
std::vector<uint8_t> error_reply(int32_t request_op, int32_t request_id, int32_t reply_id,
                                 const std::string& errmsg, int32_t code, const char* code_name) {
  wire::OwnedBson doc;
  BSON_APPEND_DOUBLE(doc.get(), "ok", 0.0);
  BSON_APPEND_UTF8(doc.get(), "errmsg", errmsg.c_str());
  BSON_APPEND_INT32(doc.get(), "code", code);
  BSON_APPEND_UTF8(doc.get(), "codeName", code_name);
  if (request_op == static_cast<int32_t>(wire::OpCode::kQuery)) {
    return wire::build_op_reply(reply_id, request_id, doc.view().bytes());
  }
  return wire::OpMsgBuilder(reply_id, request_id).body(doc.get()).finish();
}

}  // namespace

Session::Session(tcp::socket client, ProxyRuntime& runtime)
    : client_(std::move(client)),
      upstream_(tcp::socket(client_.get_executor())),
      rt_(runtime),
      peer_(endpoint_text(client_.socket())),
      client_in_(runtime.config.max_message_bytes),
      // Replies may be as large as the server allows, whatever docguard's request limit.
      upstream_in_(std::max(runtime.config.max_message_bytes, wire::kDefaultMaxMessageBytes)),
      client_write_done_(client_.get_executor()) {
  rt_.active_sessions.fetch_add(1);
  rt_.metrics.connections_total.Increment();
  rt_.metrics.connections_active.Increment();
}

Session::~Session() {
  rt_.active_sessions.fetch_sub(1);
  rt_.metrics.connections_active.Decrement();
}

awaitable<void> Session::run() {
  auto self = shared_from_this();
  boost::system::error_code ec;
  client_.socket().set_option(tcp::no_delay(true), ec);

  if (rt_.tls.client_facing) {
    asio::steady_timer timer(client_.get_executor(), rt_.config.connect_timeout);
    auto result =
        co_await (client_.start_tls(*rt_.tls.client_facing, asio::ssl::stream_base::server, "") ||
                  timer.async_wait(kUseTuple));
    if (result.index() == 1 || std::get<0>(result)) {
      const std::string why = result.index() == 1 ? "timed out" : std::get<0>(result).message();
      rt_.metrics.protocol_errors.get("tls_handshake").Increment();
      spdlog::warn("closing connection from {}: TLS handshake failed: {}", peer_, why);
      client_.close();
      co_return;
    }
  }

  const std::string failure = co_await connect_upstream();
  rt_.metrics.upstream_up.Set(failure.empty() ? 1 : 0);
  if (!failure.empty()) {
    spdlog::warn("upstream unreachable for client {}: {}", peer_, failure);
    co_await refuse_first_request(failure);
    client_.close();
    co_return;
  }
  spdlog::debug("client {} connected, upstream {}", peer_, rt_.config.upstream.to_string());

  last_client_activity_ = last_upstream_activity_ = std::chrono::steady_clock::now();
  co_await (client_to_upstream() || upstream_to_client() || watchdog());
  closed_ = true;
  client_.close();
  upstream_.close();
  spdlog::debug("client {} closed", peer_);
}

awaitable<std::string> Session::connect_upstream() {
  const auto& c = rt_.config;
  tcp::resolver resolver(client_.get_executor());
  auto [rec, endpoints] =
      co_await resolver.async_resolve(c.upstream.host, std::to_string(c.upstream.port), kUseTuple);
  if (rec) {
    rt_.metrics.upstream_errors.get("connect").Increment();
    co_return "cannot resolve " + c.upstream.host + ": " + rec.message();
  }
  asio::steady_timer timer(client_.get_executor(), c.connect_timeout);
  auto result = co_await (asio::async_connect(upstream_.socket(), endpoints, kUseTuple) ||
                          timer.async_wait(kUseTuple));
  if (result.index() == 1) {
    rt_.metrics.upstream_errors.get("connect").Increment();
    co_return "timed out connecting to " + c.upstream.to_string();
  }
  if (auto [cec, ep] = std::get<0>(result); cec) {
    rt_.metrics.upstream_errors.get("connect").Increment();
    co_return "cannot connect to " + c.upstream.to_string() + ": " + cec.message();
  }
  boost::system::error_code ec;
  upstream_.socket().set_option(tcp::no_delay(true), ec);
  if (rt_.tls.upstream) {
    const std::string name =
        c.upstream_tls.server_name.empty() ? c.upstream.host : c.upstream_tls.server_name;
    timer.expires_after(c.connect_timeout);
    auto hs =
        co_await (upstream_.start_tls(*rt_.tls.upstream, asio::ssl::stream_base::client, name) ||
                  timer.async_wait(kUseTuple));
    if (hs.index() == 1 || std::get<0>(hs)) {
      rt_.metrics.upstream_errors.get("tls").Increment();
      co_return "TLS handshake with " + c.upstream.to_string() +
          " failed: " + (hs.index() == 1 ? std::string("timed out") : std::get<0>(hs).message());
    }
  }
  co_return std::string();
}

void Session::drain() {
  draining_ = true;
  if (outstanding_ == 0) {
    client_.close();
  }
}

awaitable<void> Session::refuse_first_request(const std::string& reason) {
  // Answer the driver's first request (normally its hello) with a clear error, so the
  // application sees why instead of a bare connection reset.
  asio::steady_timer timer(client_.get_executor(), rt_.config.connect_timeout);
  TimePoint started{};
  auto result =
      co_await (next_message(client_, client_in_, started) || timer.async_wait(kUseTuple));
  if (result.index() != 0 || std::get<0>(result).first) co_return;
  const auto header = wire::read_header(std::get<0>(result).second.data());
  int32_t op = header.op_code;
  if (op == static_cast<int32_t>(wire::OpCode::kCompressed))
    op = static_cast<int32_t>(wire::OpCode::kMsg);
  auto reply = error_reply(
      op, header.request_id, rt_.new_request_id(),
      "docguard: upstream " + rt_.config.upstream_uri + " is unreachable (" + reason + ")", 6,
      "HostUnreachable");
  rt_.metrics.messages_blocked.Increment();
  co_await client_.write_all(asio::buffer(reply));
}

awaitable<std::pair<boost::system::error_code, wire::Bytes>> Session::next_message(
    Stream& stream, wire::InboundBuffer& in, TimePoint& frame_started) {
  while (true) {
    const wire::Bytes message = in.next_message();  // throws ProtocolError
    if (!message.empty()) {
      frame_started = in.pending() > 0 ? std::chrono::steady_clock::now() : TimePoint{};
      co_return std::pair{boost::system::error_code{}, message};
    }
    if (in.pending() == 0 && in.capacity() > wire::InboundBuffer::kIdleCapacity) {
      // After a large message: back to a small buffer so an idle connection stays small; the
      // large block waits as this thread's spare for the next large message.
      in.shrink();
    }
    // One read takes whatever the socket has: often the whole message, or several.
    const auto space = in.writable();
    auto [ec, n] = co_await stream.read_some(asio::buffer(space.data(), space.size()));
    if (ec) co_return std::pair{ec, wire::Bytes{}};
    in.commit(n);
    if (frame_started == TimePoint{}) frame_started = std::chrono::steady_clock::now();
  }
}

awaitable<void> Session::watchdog() {
  using std::chrono::milliseconds;
  const auto& c = rt_.config;
  auto shortest = c.frame_timeout;
  if (c.idle_timeout.count() > 0) shortest = std::min(shortest, c.idle_timeout);
  if (c.upstream_timeout.count() > 0) shortest = std::min(shortest, c.upstream_timeout);
  const auto period = std::clamp(shortest / 4, milliseconds(50), milliseconds(5000));
  asio::steady_timer timer(client_.get_executor());
  while (true) {
    timer.expires_after(period);
    auto [ec] = co_await timer.async_wait(kUseTuple);
    if (ec) co_return;  // cancelled: the session is ending
    const auto now = std::chrono::steady_clock::now();
    const char* reason = nullptr;
    if (client_frame_started_ != TimePoint{} && now - client_frame_started_ > c.frame_timeout) {
      reason = "client_frame_timeout";
    } else if (upstream_frame_started_ != TimePoint{} &&
               now - upstream_frame_started_ > c.frame_timeout) {
      reason = "upstream_frame_timeout";
    } else if (c.idle_timeout.count() > 0 && outstanding_ == 0 &&
               client_frame_started_ == TimePoint{} &&
               now - last_client_activity_ > c.idle_timeout) {
      reason = "idle_timeout";
    } else if (c.upstream_timeout.count() > 0 && outstanding_ > 0 &&
               now - std::max(last_upstream_activity_, last_client_activity_) >
                   c.upstream_timeout) {
      reason = "upstream_timeout";
    }
    if (reason != nullptr) {
      if (std::string_view(reason).starts_with("upstream")) {
        rt_.metrics.upstream_errors.get("timeout").Increment();
      } else {
        rt_.metrics.protocol_errors.get(reason).Increment();
      }
      spdlog::warn("closing connection from {}: {}", peer_, reason);
      co_return;
    }
  }
}

awaitable<void> Session::write_client(wire::Bytes bytes) {
  // Both directions may answer the client (relayed replies, replies docguard makes itself):
  // one write at a time so messages never interleave.
  while (client_writing_) {
    client_write_done_.expires_at(asio::steady_timer::time_point::max());
    co_await client_write_done_.async_wait(kUseTuple);
    if (closed_) co_return;
  }
  client_writing_ = true;
  auto [ec, n] = co_await client_.write_all(asio::buffer(bytes.data(), bytes.size()));
  client_writing_ = false;
  client_write_done_.cancel();
  if (ec) throw boost::system::system_error(ec);
}

awaitable<void> Session::write_upstream(wire::Bytes bytes) {
  auto [ec, n] = co_await upstream_.write_all(asio::buffer(bytes.data(), bytes.size()));
  if (ec) throw boost::system::system_error(ec);
  rt_.metrics.client_bytes.Increment(static_cast<double>(bytes.size()));
}

void Session::protocol_error(const char* where, const wire::ProtocolError& e) {
  rt_.metrics.protocol_errors.get(e.kind()).Increment();
  spdlog::warn("closing connection from {} ({}): {}: {}", peer_, where, e.kind(), e.what());
}

bool Session::upstream_accepts(wire::Compressor compressor) const {
  return std::find(upstream_compressors_.begin(), upstream_compressors_.end(), compressor) !=
         upstream_compressors_.end();
}

void Session::note_hello(const wire::BsonView& hello) {
  client_compressors_ = supported_compressors(hello);
  if (app_name_.empty()) app_name_ = client_app_name(hello);
}

awaitable<void> Session::client_to_upstream() {
  try {
    while (true) {
      if (draining_ && outstanding_ == 0) co_return;
      auto [ec, message] = co_await next_message(client_, client_in_, client_frame_started_);
      if (ec) {
        if (client_in_.pending() > 0) {
          // Gone in the middle of a message: nothing of it was forwarded.
          rt_.metrics.protocol_errors.get("truncated_frame").Increment();
          spdlog::info("client {} disconnected in the middle of a message", peer_);
        }
        co_return;
      }
      last_client_activity_ = std::chrono::steady_clock::now();
      co_await handle_request(message);
      trim(request_scratch_);
    }
  } catch (const wire::ProtocolError& e) {
    protocol_error("request", e);
  } catch (const boost::system::system_error& e) {
    spdlog::debug("client {}: {}", peer_, e.what());
  }
}

awaitable<void> Session::handle_request(wire::Bytes message) {
  const auto header = wire::read_header(message.data());
  wire::Bytes forward = message;
  wire::Bytes inspect = message;
  int32_t op = header.op_code;

  if (op == static_cast<int32_t>(wire::OpCode::kCompressed)) {
    const auto compressor = static_cast<wire::Compressor>(message[wire::kHeaderSize + 8]);
    request_scratch_ = wire::decompress_message(message, rt_.config.max_message_bytes);
    rt_.metrics.compressed_messages.get(wire::compressor_name(compressor)).Increment();
    inspect = request_scratch_;
    op = wire::read_header(request_scratch_.data()).op_code;
    // docguard offers clients every compressor it can read; an upstream that did not agree
    // to this one gets the message uncompressed.
    if (!upstream_accepts(compressor)) forward = request_scratch_;
  }

  if (op == static_cast<int32_t>(wire::OpCode::kMsg)) {
    const auto started = std::chrono::steady_clock::now();
    const wire::OpMsg msg = wire::OpMsg::parse(inspect);
    if ((msg.flags & ~(wire::op_msg_flags::kRequiredMask | wire::op_msg_flags::kKnownMask)) != 0) {
      // Unknown optional bits must be cleared before forwarding; do it on an uncompressed copy
      // (only the flags change, so `msg`'s views into `inspect` stay right).
      if (inspect.data() != request_scratch_.data()) {
        request_scratch_.assign(inspect.begin(), inspect.end());
      }
      wire::clear_unknown_optional_flags(request_scratch_);
      if (msg.checksum_present) wire::recompute_checksum(request_scratch_);
      forward = request_scratch_;
    }
    const command::CommandView view = command::describe(msg);
    if (view.kind == command::CommandKind::kHello) {
      pending_[header.request_id] = PendingReply::of(PendingReply::Kind::kHello);
      note_hello(msg.body);
    }
    const rules::RequestContext context{app_name_, peer_};
    const rules::Verdict verdict = rt_.engine.inspect(view, context);
    if (verdict.any_block()) {
      RequestPlan plan = plan_request(msg, view, verdict, rt_.new_request_id());
      rt_.metrics.inspection_seconds.Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      switch (plan.kind) {
        case RequestPlan::Kind::kForwardOriginal:
          break;
        case RequestPlan::Kind::kForwardRewritten:
          if (!view.more_to_come) {
            pending_[header.request_id] = PendingReply::of(PendingReply::Kind::kMerge, plan.merge);
          }
          request_scratch_ = std::move(plan.message);
          forward = request_scratch_;
          break;
        case RequestPlan::Kind::kReplyNow:
          rt_.metrics.messages_blocked.Increment();
          co_await write_client(plan.message);
          co_return;
        case RequestPlan::Kind::kDrop:
          rt_.metrics.messages_blocked.Increment();
          co_return;
      }
    } else {
      rt_.metrics.inspection_seconds.Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      if (!view.more_to_come && rt_.engine.wants_reply_sample(view)) {
        auto p = PendingReply::of(PendingReply::Kind::kSample);
        p.db = std::string(view.database);
        p.collection = std::string(view.collection);
        p.command = view.kind;
        pending_[header.request_id] = std::move(p);
      }
    }
    if (msg.more_to_come()) {
      unacknowledged_.push_back(header.request_id);
      if (unacknowledged_.size() > 64) unacknowledged_.pop_front();
    } else {
      ++outstanding_;
    }
  } else if (op == static_cast<int32_t>(wire::OpCode::kQuery)) {
    const wire::OpQuery query = wire::OpQuery::parse(inspect);
    wire::BsonView command = query.query;
    // Legacy drivers may wrap the command: {$query: {isMaster: 1}, $readPreference: ...}.
    {
      bson_t b = command.borrow();
      bson_iter_t it;
      if (bson_iter_init_find(&it, &b, "$query") && BSON_ITER_HOLDS_DOCUMENT(&it)) {
        command = wire::view_of(it);
      }
    }
    if (query.full_collection_name.ends_with(".$cmd") && is_hello_command(command)) {
      pending_[header.request_id] = PendingReply::of(PendingReply::Kind::kLegacyHello);
      note_hello(command);
    }
    ++outstanding_;
  } else {
    // Other legacy opcodes pass through untouched; servers since 5.1 refuse them themselves.
    ++outstanding_;
  }
  co_await write_upstream(forward);
}

std::vector<uint8_t> Session::rewrite_reply(const PendingReply& pending, wire::Bytes message) {
  const auto header = wire::read_header(message.data());
  wire::Bytes plain = message;
  if (header.op_code == static_cast<int32_t>(wire::OpCode::kCompressed)) {
    reply_scratch_ = wire::decompress_message(
        message, std::max(rt_.config.max_message_bytes, wire::kDefaultMaxMessageBytes));
    plain = reply_scratch_;
  }
  const int32_t op = wire::read_header(plain.data()).op_code;
  switch (pending.kind) {
    case PendingReply::Kind::kLegacyHello: {
      if (op != static_cast<int32_t>(wire::OpCode::kReply)) return {};
      const auto reply = wire::OpReply::parse(plain);
      if (reply.documents.empty()) return {};
      auto rewritten = rewrite_hello_reply(reply.documents[0], client_compressors_, rt_.persona);
      upstream_compressors_ = rewritten.upstream_compressors;
      return wire::build_op_reply(header.request_id, header.response_to,
                                  rewritten.reply.view().bytes(), reply.response_flags);
    }
    case PendingReply::Kind::kHello: {
      if (op != static_cast<int32_t>(wire::OpCode::kMsg)) return {};
      const auto reply = wire::OpMsg::parse(plain);
      auto rewritten = rewrite_hello_reply(reply.body, client_compressors_, rt_.persona);
      upstream_compressors_ = rewritten.upstream_compressors;
      return wire::OpMsgBuilder(header.request_id, header.response_to)
          .body(rewritten.reply.get())
          .finish();
    }
    case PendingReply::Kind::kMerge: {
      if (op != static_cast<int32_t>(wire::OpCode::kMsg)) return {};
      const auto reply = wire::OpMsg::parse(plain);
      return merge_reply(*pending.merge, reply, header.response_to);
    }
    case PendingReply::Kind::kSample: {
      if (op == static_cast<int32_t>(wire::OpCode::kMsg)) {
        const auto reply = wire::OpMsg::parse(plain);
        command::CommandView request;
        request.kind = pending.command;
        request.database = pending.db;
        request.collection = pending.collection;
        rt_.engine.observe_reply(request, reply);
      }
      return {};
    }
  }
  return {};
}

awaitable<void> Session::upstream_to_client() {
  try {
    while (true) {
      auto [ec, message] = co_await next_message(upstream_, upstream_in_, upstream_frame_started_);
      if (ec) {
        // Aborted means the client side ended first and cancelled this read.
        if (ec != asio::error::operation_aborted) {
          rt_.metrics.upstream_errors.get("closed").Increment();
          spdlog::info("upstream closed the connection of client {}", peer_);
        }
        co_return;
      }
      last_upstream_activity_ = std::chrono::steady_clock::now();
      rt_.metrics.upstream_bytes.Increment(static_cast<double>(message.size()));
      const auto header = wire::read_header(message.data());
      const bool was_streaming = upstream_streaming_;
      upstream_streaming_ = is_reply_more_to_come(message);
      if (!was_streaming && !unacknowledged_.empty()) {
        auto it = std::find(unacknowledged_.begin(), unacknowledged_.end(), header.response_to);
        if (it != unacknowledged_.end()) {
          unacknowledged_.erase(it);
          spdlog::debug("dropped the upstream's reply to unacknowledged request {}",
                        header.response_to);
          continue;
        }
      }
      if (!upstream_streaming_ && outstanding_ > 0) --outstanding_;
      std::vector<uint8_t> rewritten;
      if (!pending_.empty()) {
        if (auto it = pending_.find(header.response_to); it != pending_.end()) {
          const PendingReply pending = std::move(it->second);
          pending_.erase(it);
          rewritten = rewrite_reply(pending, message);
        }
      }
      co_await write_client(rewritten.empty() ? message : wire::Bytes(rewritten));
      trim(reply_scratch_);
      if (draining_ && outstanding_ == 0) {
        client_.close();
        co_return;
      }
    }
  } catch (const wire::ProtocolError& e) {
    rt_.metrics.upstream_errors.get("bad_reply").Increment();
    spdlog::error("closing connection of client {}: malformed upstream reply: {}: {}", peer_,
                  e.kind(), e.what());
  } catch (const boost::system::system_error& e) {
    spdlog::debug("client {}: {}", peer_, e.what());
  }
}

}  // namespace docguard::proxy
