// Dynamic batching: requests to one policy wait in a bounded queue; a fixed pool of inference
// threads takes them in batches (up to max_batch_rows rows, waiting up to max_wait for a batch
// to fill) and answers each with the action it would get alone (rlx::Policy::act_batch).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "serve/act_request.h"
#include "serve/policy_slot.h"
#include "serve/serve_metrics.h"

namespace rlx {

struct BatchingOptions {
  int threads = 1;                      // inference threads
  // Threads of the endpoints (HTTP io threads, the ZeroMQ thread) that may answer a lone request
  // themselves when the pool is idle (run_inline): policies hold threads + inline_lanes instances.
  int inline_lanes = 0;
  int64_t max_batch_rows = 256;         // rows per batch
  std::chrono::microseconds max_wait{0};  // how long a batch waits to fill (0: what is queued)
  size_t max_queue = 1024;              // requests waiting per policy; more are answered 503
  // run_inline answers a request on its endpoint thread only when one observation's act() took at
  // most this long (ServedModel::act_micros): cheaper than a hand-off to an inference thread, and
  // too short to hold up the endpoint's other connections.
  double max_inline_act_micros = 25;
};

class InferencePool {
 public:
  // Starts the threads over these policies (not owned; they outlive the pool).
  InferencePool(std::vector<PolicySlot*> slots, const BatchingOptions& options, ServeMetrics& metrics);
  // Answers what is queued, then joins the threads.
  ~InferencePool();
  InferencePool(const InferencePool&) = delete;
  InferencePool& operator=(const InferencePool&) = delete;

  // Queues the request for its slot; false (and the request untouched) when that queue is full
  // or the pool is stopping. Thread-safe.
  bool submit(std::unique_ptr<ActRequest>& request);
  // Answers the request on the calling thread, as a batch of its own, when nothing is queued or
  // being answered, batches do not wait to fill (max_wait 0) and the policy is cheap
  // (max_inline_act_micros): an idle server answers a lone request with no thread hand-off.
  // Returns false (the request untouched) otherwise, or when the pool stops. `lane` (< inline_lanes) names the
  // calling endpoint thread, whose policy instances only it uses.
  bool run_inline(std::unique_ptr<ActRequest>& request, int lane);
  // Requests queued for one policy now.
  size_t queue_depth(size_t slot) const;
  // Requests queued or being answered, over every policy.
  size_t pending() const;
  // Blocks until nothing is queued or being answered, or `timeout` passed; true when idle.
  bool wait_idle(std::chrono::milliseconds timeout) const;

 private:
  struct Queue {
    std::deque<std::unique_ptr<ActRequest>> waiting;
    std::set<std::string> busy_sessions;  // sessions with a step being answered
  };
  struct Batch {
    size_t slot = 0;
    std::vector<std::unique_ptr<ActRequest>> requests;
  };

  void run(int thread);
  // Under the lock: takes the next batch (empty when there is nothing to take).
  Batch take_batch(std::unique_lock<std::mutex>& lock);
  // Without the lock: answers every request of the batch with policy instance `thread`.
  void answer(const Batch& batch, int thread);
  // Takes the lock: the batch is answered (its sessions free again).
  void finish(const Batch& batch);
  std::vector<ActReply> act(const Batch& batch, int thread);

  std::vector<PolicySlot*> slots_;
  const BatchingOptions options_;
  ServeMetrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  mutable std::condition_variable idle_;
  std::vector<Queue> queues_;
  size_t next_slot_ = 0;   // round robin over policies
  size_t running_ = 0;     // requests taken and not yet answered
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rlx
