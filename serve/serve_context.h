// What every endpoint of a running server shares: the policies, the inference pool, the metrics,
// the limits and whether the server drains. Endpoints (HTTP, ZeroMQ) decode a request, submit it
// here and send the answer they are called back with.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "serve/inference_pool.h"
#include "serve/policy_slot.h"
#include "serve/request_decoding.h"
#include "serve/serve_metrics.h"

namespace rlx {

// Marks the calling thread as endpoint thread `lane` (an HTTP io thread, the ZeroMQ thread):
// requests it submits to an idle server are answered on it (InferencePool::run_inline).
void set_inline_lane(int lane);

class ServeContext {
 public:
  ServeContext(std::vector<std::unique_ptr<PolicySlot>> slots, const BatchingOptions& batching, const RequestLimits& limits);
  // Finishes the reload under way (later ones are dropped), then stops the pool's threads.
  ~ServeContext();
  ServeContext(const ServeContext&) = delete;
  ServeContext& operator=(const ServeContext&) = delete;

  // The index of the policy called `name`; nullopt for none.
  std::optional<size_t> slot_index(const std::string& name) const;
  PolicySlot& slot(size_t index) { return *slots_.at(index); }
  size_t slot_count() const { return slots_.size(); }
  // The policies' names, in the order served.
  std::vector<std::string> slot_names() const;
  // Queues a decoded request (or, from an endpoint thread of an idle server, answers it there);
  // when its policy's queue is full or the server drains, answers it at once with 503.
  void submit(std::unique_ptr<ActRequest> request);
  // Reloads one policy (POST .../reload, the trial watcher) on the reload thread, so that no
  // endpoint waits for a load, counts the outcome and calls `done` with it there.
  void reload(size_t index, bool force, std::function<void(const ReloadOutcome&)> done);
  // The gauges and counters as Prometheus text.
  std::string metrics_text(size_t connections) const;

  ServeMetrics& metrics() { return metrics_; }
  InferencePool& pool() { return *pool_; }
  const RequestLimits& limits() const { return limits_; }
  bool draining() const { return draining_.load(); }
  void start_draining() { draining_.store(true); }

 private:
  std::vector<std::unique_ptr<PolicySlot>> slots_;
  ServeMetrics metrics_;
  RequestLimits limits_;
  std::atomic<bool> draining_{false};
  std::unique_ptr<InferencePool> pool_;  // its threads stop before the slots go

  struct ReloadJob {
    size_t index = 0;
    bool force = false;
    std::function<void(const ReloadOutcome&)> done;
  };
  void run_reloads();
  std::mutex reload_mutex_;
  std::condition_variable reload_ready_;
  std::deque<ReloadJob> reload_jobs_;
  bool reload_stopping_ = false;
  std::thread reload_thread_;  // last: started once everything above exists
};

}  // namespace rlx
