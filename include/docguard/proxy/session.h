// One client connection and its own upstream connection.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "docguard/proxy/enforcement.h"
#include "docguard/proxy/runtime.h"
#include "docguard/proxy/stream.h"
#include "docguard/wire/inbound_buffer.h"
#include "docguard/wire/op_compressed.h"

namespace docguard::proxy {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::ip::tcp::socket client, ProxyRuntime& runtime);
  ~Session();

  // Connects upstream and relays until either side closes.
  boost::asio::awaitable<void> run();
  // Asks the session to close once no request is in flight (graceful shutdown). Must be called
  // on the session's executor.
  void drain();
  boost::asio::any_io_executor executor() { return client_.get_executor(); }

 private:
  using TimePoint = std::chrono::steady_clock::time_point;

  // What to do with the reply to one request; most requests need nothing and get no entry.
  struct PendingReply {
    enum class Kind { kHello, kLegacyHello, kMerge, kSample } kind = Kind::kHello;
    std::shared_ptr<PendingMerge> merge;
    std::string db, collection;  // kSample: the request's namespace
    command::CommandKind command = command::CommandKind::kOther;

    static PendingReply of(Kind kind, std::shared_ptr<PendingMerge> merge = nullptr) {
      PendingReply p;
      p.kind = kind;
      p.merge = std::move(merge);
      return p;
    }
  };

  boost::asio::awaitable<void> client_to_upstream();
  boost::asio::awaitable<void> upstream_to_client();
  // Reads until `in` holds a whole message and returns a view of it (valid until the next
  // call), or the read error. A declared length outside the limits throws ProtocolError.
  // `frame_started` is set while a partial message is buffered (for the watchdog).
  boost::asio::awaitable<std::pair<boost::system::error_code, wire::Bytes>> next_message(
      Stream& stream, wire::InboundBuffer& in, TimePoint& frame_started);
  boost::asio::awaitable<void> write_client(wire::Bytes bytes);
  boost::asio::awaitable<void> write_upstream(wire::Bytes bytes);
  // Closes the session when a message stalls mid-frame, the client idles past idle_timeout, or
  // the upstream goes silent past upstream_timeout with requests in flight. It polls coarsely
  // so the per-message cost is only a clock read.
  boost::asio::awaitable<void> watchdog();
  // Connects (and, if configured, starts TLS) upstream; returns why it failed, or "".
  boost::asio::awaitable<std::string> connect_upstream();
  boost::asio::awaitable<void> refuse_first_request(const std::string& reason);

  // Handles one request; returns the bytes to forward upstream (empty: nothing to forward).
  boost::asio::awaitable<void> handle_request(wire::Bytes message);
  std::vector<uint8_t> rewrite_reply(const PendingReply& pending, wire::Bytes message);
  bool upstream_accepts(wire::Compressor compressor) const;
  void note_hello(const wire::BsonView& hello);
  void protocol_error(const char* where, const wire::ProtocolError& e);

  Stream client_;
  Stream upstream_;
  ProxyRuntime& rt_;
  std::string peer_;
  std::string app_name_;
  wire::InboundBuffer client_in_;
  wire::InboundBuffer upstream_in_;
  // Decompressed or rewritten messages, one per direction: each direction's coroutine may be
  // suspended in a write while the other runs.
  std::vector<uint8_t> request_scratch_;
  std::vector<uint8_t> reply_scratch_;
  std::unordered_map<int32_t, PendingReply> pending_;
  // requestIDs of recent unacknowledged (moreToCome) requests. A server must not answer them,
  // but some do (FerretDB 1.x); such a reply would desynchronise the driver, so it is dropped.
  // Bounded: a conforming server never answers, so old ids are forgotten.
  std::deque<int32_t> unacknowledged_;
  bool upstream_streaming_ = false;  // the last reply had moreToCome: a follow-up comes next
  std::vector<wire::Compressor> client_compressors_;
  std::vector<wire::Compressor> upstream_compressors_;
  boost::asio::steady_timer client_write_done_;
  bool client_writing_ = false;
  int64_t outstanding_ = 0;  // requests forwarded that still expect a reply
  bool draining_ = false;
  TimePoint client_frame_started_{};    // zero when not inside a client message
  TimePoint upstream_frame_started_{};  // zero when not inside an upstream message
  TimePoint last_client_activity_{};
  TimePoint last_upstream_activity_{};
  bool closed_ = false;
};

}  // namespace docguard::proxy
