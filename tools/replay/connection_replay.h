// One recorded connection's replay (private to replay/): a thread that takes the connection's
// requests from its mailbox in order, rewrites each when it is sent (so a getMore names the
// live cursor opened before it), runs it on the connection's client slot or in the live session
// of its recorded lsid, waits for the recorded reply the reader hands over, and compares.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "docguard/tools/replay_compare.h"
#include "docguard/tools/replay_request.h"
#include "replay_clients.h"
#include "replay_policy.h"
#include "replay_runner.h"

namespace docguard::tools {

// A recorded request on its way to a connection's thread, and later its recorded reply.
struct PendingStep {
  std::vector<uint8_t> request;
  uint64_t request_offset = 0;
  std::vector<int32_t> refused_statements;  // of a batch docguard forwarded in part
  RequestClass kind;

  // The reader sets the recorded reply once it has read it, or says there is none.
  void set_reply(std::vector<uint8_t> bytes, uint64_t offset, bool gated);
  void no_reply();
  // Waits until the reader has said; true when a recorded reply is there.
  bool wait_reply();
  const std::vector<uint8_t>& reply() const { return reply_; }
  uint64_t reply_offset() const { return reply_offset_; }
  bool gated() const { return gated_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool known_ = false;
  bool gated_ = false;
  std::vector<uint8_t> reply_;
  uint64_t reply_offset_ = 0;
};

// Keeps the recorded causality across connections: a request recorded after another
// connection's reply is sent only once that reply has come in the replay. Each recorded reply
// the reader hands over is assigned; each is completed when its request's live answer has been
// compared; the reader dispatches a request only when every assigned reply is complete.
class CausalGate {
 public:
  void assign();
  void complete();
  void wait_all();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t assigned_ = 0;
  uint64_t completed_ = 0;
};

// An operation being compared, with the lock a step holds while it adds to it: two getMores of
// one cursor recorded at once on two connections are replayed at once too.
struct OpenOperation {
  std::mutex mu;
  ComparedOperation op;
  bool folded = false;  // handed to the tally: a later step starts an operation of its own
};

// Operations whose cursor is still open, by recorded cursor id: a getMore on any connection
// continues the operation that opened its cursor.
class OpenOperations {
 public:
  std::shared_ptr<OpenOperation> find(int64_t recorded_cursor);
  void put(int64_t recorded_cursor, std::shared_ptr<OpenOperation> op);
  std::shared_ptr<OpenOperation> take(int64_t recorded_cursor);
  std::vector<std::shared_ptr<OpenOperation>> take_all();

 private:
  std::mutex mu_;
  std::map<int64_t, std::shared_ptr<OpenOperation>> open_;
};

// What every connection's thread shares.
struct ReplayShared {
  const ReplayOptions& options;
  ReplayClients& clients;
  CursorMap cursors;
  CausalGate gate;
  ShapeTally tally;
  OpenOperations open;
  ReplayProgress& progress;
  AbortWatch& abort;
};

class ConnectionReplay {
 public:
  ConnectionReplay(ReplayShared& shared, size_t slot) : shared_(shared), slot_(slot) {}

  // The reader's side: a step to replay, or nullptr when the connection ends.
  void push(std::shared_ptr<PendingStep> step);
  // The thread's body: replays every step pushed until the end.
  void run();

  ReplayCounts counts;

 private:
  std::shared_ptr<PendingStep> pop();
  void replay(PendingStep& step);
  void compare(PendingStep& step, ReplayRequest& request, OpenOperation& open);
  bool send(ReplayRequest& request, codec::ScopedBson& reply, std::string& failure);

  ReplayShared& shared_;
  const size_t slot_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<PendingStep>> mailbox_;
};

}  // namespace docguard::tools
