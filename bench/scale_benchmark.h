// Scale benchmark: one SampleReceiver in this process, fed by many synthetic workers
// (bench/synthetic_fleet.h) in forked child processes over tcp://127.0.0.1, each worker
// its own connection; a learner thread pops as fast as it can. Measures this process's CPU
// time per fragment received over a timed window, then stops every worker and checks that
// every fragment sent is accounted for.
#pragma once

#include <cstdint>
#include <string>

namespace rlx {

struct ScaleOptions {
  int workers = 10;                  // connections, each a synthetic worker
  int workers_per_process = 250;     // child processes: ceil(workers / workers_per_process)
  double seconds = 30;               // measured window
  double warmup_seconds = 2;         // after every worker joined, before the window
  int32_t fragment_length = 32;      // T
  int32_t num_envs = 8;              // K
  int64_t obs_size = 4;              // O; actions are Discrete(2), as in CartPole
  int credits_per_worker = 2;
  double max_fragments_per_s_per_worker = 0;  // 0: as fast as credits allow
  double total_fragments_per_s = 0;           // when > 0: split evenly over the workers (instead of the above)
  double weights_interval_seconds = 1;        // new weights this often (as a learner would); 0: once
  int64_t weights_params = 4096;              // floats per weights message
  int heartbeat_interval_ms = 500;            // each worker's, as RolloutWorker's default
  double join_timeout_seconds = 60;           // for every worker to join
  double stop_timeout_seconds = 30;           // for every worker's goodbye and its process to exit
};

struct ScaleResult {
  int workers = 0;
  int processes = 0;
  double seconds = 0;                  // length of the measured window
  double join_seconds = 0;             // from the endpoint reaching the workers to the last hello
  // Totals from start to finish.
  uint64_t fragments_sent = 0;         // reported by the workers' processes
  uint64_t fragments_received = 0;     // the receiver's counts (ReceiverStats)
  uint64_t fragments_consumed = 0;
  uint64_t dropped_stale = 0;
  uint64_t dropped_unknown_worker = 0;
  uint64_t dropped_at_stop = 0;
  uint64_t queued = 0;                 // still queued at the end
  uint64_t messages_rejected = 0;
  uint64_t workers_joined = 0;
  uint64_t workers_left = 0;           // goodbyes received
  uint64_t workers_lost = 0;
  uint64_t weights_published = 0;
  uint64_t weights_received = 0;       // by the workers, summed
  uint64_t sends_refused = 0;          // by the workers' sockets, summed
  // The measured window.
  uint64_t window_fragments = 0;       // received in the window
  double receiver_cpu_seconds = 0;     // this process, user + system, in the window
  double cpu_us_per_fragment = 0;
  double fragments_per_s = 0;
  // sent == received == consumed + dropped_* + queued, and every worker said goodbye.
  bool accounted = false;
};

// Runs one measurement; raises RLIMIT_NOFILE to its hard limit first. Throws
// std::invalid_argument on bad options, std::runtime_error if workers fail to join, a worker
// process fails or the fd limit is too low, std::system_error if fork or a pipe fails.
ScaleResult run_scale_benchmark(const ScaleOptions& options);

// User + system CPU seconds of this process, all its threads (getrusage RUSAGE_SELF; children
// are not counted); std::system_error if getrusage fails.
double process_cpu_seconds();

// The result as key=value pairs on one line, e.g. "workers=10 fragments_sent=... accounted=true".
std::string format_scale_result(const ScaleResult& result);

}  // namespace rlx
