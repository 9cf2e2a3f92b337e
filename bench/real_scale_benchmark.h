// The scale benchmark with real workers: N `rlx worker` processes (the torch-free binary), each
// stepping its env with the default policy network, stream fragments into one SampleReceiver in
// this process, whose learner thread only pops. Measures this process's CPU time per fragment
// over a timed window once every worker has joined, the workers' memory (PSS from
// /proc/PID/smaps_rollup, which sums to what they really take together), then stops every
// worker and checks that every fragment a worker says it sent (its exit log line) is
// accounted for. `rlx bench scale --real-workers` prints it beside the synthetic mode
// (bench/scale_benchmark.h).
//
// Limits at 1,000 workers: the receiver's ROUTER holds one descriptor per connection, hence
// RLIMIT_NOFILE (raised to the hard limit here); ZeroMQ's ZMQ_MAX_SOCKETS (1,023 by default)
// counts sockets made with zmq_socket, not connections: the receiver makes a handful.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace rlx {

struct RealScaleOptions {
  std::string worker_program;             // the rlx binary that runs `rlx worker` (rlx_program_path())
  std::string env_id = "CartPole-v1";
  int workers = 10;                       // processes, one connection each
  int envs_per_worker = 1;                // K
  int32_t fragment_length = 32;           // T
  int credits_per_worker = 2;
  uint64_t max_policy_lag = 1;
  double seconds = 10;                    // measured window
  double warmup_seconds = 2;              // after every worker joined, before the window
  double weights_interval_seconds = 1;    // a new policy version this often (as a learner would); 0: once
  double join_timeout_seconds = 120;      // from the first start to the last hello
  double stop_timeout_seconds = 30;       // for every goodbye and exit
  std::string endpoint = "tcp://127.0.0.1:*";  // the receiver's (ipc:// as `rlx train` uses works too)
  std::filesystem::path log_dir;          // worker i logs to log_dir/worker_<i + 1>.log; empty: a temporary dir
  uint64_t seed = 0;
};

struct RealScaleResult {
  int workers = 0;
  double spawn_seconds = 0;           // starting every process (fork + exec, one after another)
  double join_seconds = 0;            // from the first start to the last hello
  double seconds = 0;                 // length of the measured window
  // Memory, read at the end of the window.
  int memory_read = 0;                // worker processes whose smaps_rollup was read
  long total_pss_kb = 0;              // summed over the workers: what they take together
  long total_rss_kb = 0;              // summed over the workers (shared pages counted N times)
  long max_pss_kb = 0;                // the largest worker's
  long receiver_rss_kb = 0;           // this process's (receiver, queue, learner thread)
  // Totals from start to finish.
  uint64_t fragments_sent = 0;        // summed over the workers' exit log lines
  int workers_reported = 0;           // workers whose log line gave their count
  uint64_t fragments_unsent = 0;      // dropped by workers whose connection's queue stayed full
  uint64_t fragments_received = 0;    // the receiver's counts (ReceiverStats)
  uint64_t fragments_consumed = 0;
  uint64_t dropped_stale = 0;
  uint64_t dropped_unknown_worker = 0;
  uint64_t dropped_at_stop = 0;
  uint64_t refused = 0;               // broke the contract, e.g. sent without a credit
  uint64_t queued = 0;                // still queued at the end
  uint64_t messages_rejected = 0;
  uint64_t workers_joined = 0;
  uint64_t workers_left = 0;          // goodbyes received
  uint64_t workers_lost = 0;
  uint64_t workers_restarted = 0;     // re-joins on the same connection
  int clean_exits = 0;                // worker processes that exited with status 0
  uint64_t weights_published = 0;
  uint64_t peak_queued_bytes = 0;
  uint64_t queued_bytes_bound = 0;    // max_workers x credits x largest fragment
  // The measured window.
  uint64_t window_fragments = 0;      // received in the window
  uint64_t window_env_steps = 0;      // consumed in the window
  double receiver_cpu_seconds = 0;    // this process, user + system, in the window
  double cpu_us_per_fragment = 0;
  double fragments_per_s = 0;
  double env_steps_per_s = 0;
  // Every worker joined (joins less re-joins), exited cleanly and reported; sent == received ==
  // consumed + dropped_* + refused + queued; nothing refused.
  bool accounted = false;
};

// Runs one measurement; raises RLIMIT_NOFILE to its hard limit first. Throws
// std::invalid_argument on bad options, std::runtime_error if the fd limit is too low, a
// worker exits early or the workers do not all join in time, std::system_error if a start fails.
RealScaleResult run_real_scale_benchmark(const RealScaleOptions& options);

// The result as key=value pairs on one line, starting "mode=real workers=N ...".
std::string format_real_scale_result(const RealScaleResult& result);

}  // namespace rlx
