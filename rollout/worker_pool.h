// WorkerPool: N worker processes started through a ProcessLauncher (local fork/exec by
// default), watched, restarted when they crash, stopped on exit; each worker's stdout and
// stderr go to a log file of its own.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/process_launcher.h"

namespace rlx {

// How a pool runs its workers.
struct WorkerPoolOptions {
  int num_workers = 0;
  int max_restarts = 10;  // restarts allowed over the pool's life, all workers together
  std::chrono::milliseconds stop_grace{2000};  // SIGTERM, then SIGKILL after this long
  // Worker i's output is appended to log_dir/worker_<i + 1>.log (one file across its restarts);
  // empty: the workers inherit this process's stdout and stderr.
  std::filesystem::path log_dir;
  std::vector<std::pair<std::string, std::string>> env = {};  // set in every worker's environment
  ProcessLauncher* launcher = nullptr;  // starts the workers (null: local_launcher()); outlives the pool
};

// Exit statuses after which a worker is not restarted: 0 (told to stop) and 2 (bad input, e.g.
// an env that breaks its contract: a restart would fail the same way).
constexpr int kWorkerExitStopped = 0;
constexpr int kWorkerExitBadInput = 2;

// One worker's exit, as WorkerPool::poll reports it.
struct WorkerExitReport {
  int worker_index = 0;
  pid_t pid = 0;
  ChildExit exit;
  bool restarted = false;
  int restarts_used = 0;       // by the whole pool, this restart included
  std::filesystem::path log;   // the worker's log file; empty without a log_dir
  std::vector<std::string> last_lines;  // the end of what this run of the worker wrote (at most 8 lines)
};

// Starts worker i as `argv_for(i)` (argv[0] is the program path, executed directly) through the
// launcher (the local one: every worker dies with this process, even on SIGKILL); the
// destructor stops all that still run.
class WorkerPool {
 public:
  using ArgvFn = std::function<std::vector<std::string>(int worker_index)>;

  // Starts every worker; throws what the launcher throws (std::system_error when a log cannot be
  // opened or a fork fails).
  WorkerPool(WorkerPoolOptions options, ArgvFn argv_for);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Reaps exited workers and restarts those that crashed (a signal, or an exit status other
  // than kWorkerExitStopped and kWorkerExitBadInput) while the restart budget lasts and no stop
  // signal is pending (core/stop_signal.h). Returns one report per worker found exited in this
  // call. Call it regularly.
  std::vector<WorkerExitReport> poll();

  // Sends SIGTERM to all, waits up to stop_grace, then SIGKILLs the rest and reaps them.
  void stop();

  int num_running() const;
  int restarts() const { return restarts_; }
  int deaths() const { return deaths_; }            // exits of any kind
  int clean_exits() const { return clean_exits_; }  // exits with status 0
  // Pid of worker i, or -1 when it is not running.
  pid_t pid(int worker_index) const;
  // Worker i's log file; empty without a log_dir.
  std::filesystem::path log_path(int worker_index) const;

 private:
  void spawn(int worker_index);

  WorkerPoolOptions options_;
  ArgvFn argv_for_;
  ProcessLauncher& launcher_;
  std::vector<std::unique_ptr<LaunchedProcess>> workers_;  // null: not running
  std::vector<int> starts_;                             // per worker
  int restarts_ = 0;
  int deaths_ = 0;
  int clean_exits_ = 0;
};

}  // namespace rlx
