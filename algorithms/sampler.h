// Sampler: where a training run's fragments come from. LocalSampler steps envs in the
// learner's own process, synchronously and deterministically (num_workers: 0); RemoteSampler
// runs N local worker processes (and accepts remote `rlx worker`s) over ZeroMQ.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sample_batch.h"
#include "rollout/fragment_collector.h"
#include "transport/messages.h"

namespace rlx {

// Sampling health, cumulative, for the results rows.
struct SamplerStats {
  uint64_t fragments_dropped_stale = 0;
  uint64_t fragments_dropped_other = 0;   // unknown worker, at stop
  uint64_t fragments_refused = 0;         // broke the run's contract; their senders were dropped
  uint64_t messages_rejected = 0;
  uint64_t worker_restarts = 0;
  uint64_t workers_active = 0;
  uint64_t episodes_dropped_nonfinite = 0;  // drop_nonfinite_episodes: episodes ended by a NaN/inf step
  // Workers over the network (remote samplers only): joins, losses and CURVE handshakes, and
  // every fragment that arrived (each ends consumed, dropped or refused: the rest of these counts).
  uint64_t fragments_received = 0;
  uint64_t fragments_consumed = 0;
  uint64_t fragments_queued = 0;    // received, not yet taken
  uint64_t fragments_dropped_at_stop = 0;  // queued when an earlier attempt's checkpoint was written, never taken
  uint64_t workers_joined = 0;
  uint64_t workers_lost = 0;        // silent past the heartbeat timeout (a crashed host, a cut link)
  uint64_t workers_left = 0;        // said goodbye after their last fragment (a SIGTERM, a finished run)
  uint64_t workers_failed = 0;      // said goodbye giving a failure (env contract, Python error, ...)
  std::map<std::string, uint64_t> worker_failures;  // those by cause (transport/stop_reason.h's names)
  uint64_t workers_rejoined = 0;    // came back on the same connection after going quiet
  uint64_t handshakes_refused = 0;  // a key the run does not authorize
  // Summed over workers: seconds since their hello, and of those the seconds they held no credit
  // (idle: everything they may send was queued at the learner or in flight). Remote samplers only.
  double worker_ready_s = 0.0;
  double worker_idle_s = 0.0;
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Makes these the weights of every later fragment (and, for DQN, the exploration rate).
  virtual void publish(std::shared_ptr<const Weights> weights) = 0;
  // Fragments holding at least min_transitions transitions in all, each produced by the
  // weights published last (or by the max_policy_lag versions before them). A collect that
  // could wait long checks rlx::stop_overdue() and throws rlx::StopRequested when it is true.
  virtual std::vector<SampleBatch> collect(int64_t min_transitions) = 0;
  // Episodes that finished since the last call, in no particular order.
  virtual std::vector<FinishedEpisode> take_episodes() = 0;
  virtual SamplerStats stats() const = 0;
  // The workers' failures, a line per distinct reason with its count and first worker
  // (transport/worker_stops.h); empty when none failed, and for samplers without workers.
  virtual std::vector<std::string> worker_failure_summary() const { return {}; }
  // The sampler's own state for an exact resume (envs mid-episode, observations, action
  // sampling), taken between iterations; null when it has none to give (worker processes, or
  // envs that cannot snapshot themselves).
  virtual nlohmann::json checkpoint_state() const { return nullptr; }
  // Continues from checkpoint_state()'s JSON; throws std::invalid_argument when it does not fit.
  virtual void restore(const nlohmann::json& state) { (void)state; }
};

}  // namespace rlx
