// WorkerPool: N local worker processes, watched, restarted when they die, stopped on exit.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rlx {

// How a pool runs its workers.
struct WorkerPoolOptions {
  int num_workers = 0;
  int max_restarts = 10;  // restarts allowed over the pool's life, all workers together
  std::chrono::milliseconds stop_grace{2000};  // SIGTERM, then SIGKILL after this long
};

// Spawns worker i as `argv_for(i)` (argv[0] is the program path, executed directly). Each
// child gets PR_SET_PDEATHSIG(SIGKILL), so it dies with this process even on SIGKILL; the
// destructor stops all that still run.
class WorkerPool {
 public:
  using ArgvFn = std::function<std::vector<std::string>(int worker_index)>;

  // Starts every worker; throws std::system_error when a fork fails.
  WorkerPool(WorkerPoolOptions options, ArgvFn argv_for);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Reaps exited workers and restarts those that died (a signal or a non-zero exit status)
  // while the restart budget lasts; a worker that exits with status 0 was told to stop and
  // stays down. Returns the number of workers found exited in this call. Call it regularly.
  int poll();

  // Sends SIGTERM to all, waits up to stop_grace, then SIGKILLs the rest and reaps them.
  void stop();

  int num_running() const;
  int restarts() const { return restarts_; }
  int deaths() const { return deaths_; }            // exits of any kind
  int clean_exits() const { return clean_exits_; }  // exits with status 0
  // Pid of worker i, or -1 when it is not running.
  pid_t pid(int worker_index) const { return pids_.at(static_cast<size_t>(worker_index)); }

 private:
  pid_t spawn(int worker_index);

  WorkerPoolOptions options_;
  ArgvFn argv_for_;
  std::vector<pid_t> pids_;
  pid_t parent_pid_;
  int restarts_ = 0;
  int deaths_ = 0;
  int clean_exits_ = 0;
};

}  // namespace rlx
