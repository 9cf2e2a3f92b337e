#include "rollout/worker_pool.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

namespace rlx {

WorkerPool::WorkerPool(WorkerPoolOptions options, ArgvFn argv_for)
    : options_(options), argv_for_(std::move(argv_for)), parent_pid_(::getpid()) {
  pids_.assign(static_cast<size_t>(options_.num_workers), -1);
  for (int i = 0; i < options_.num_workers; ++i) pids_[static_cast<size_t>(i)] = spawn(i);
}

WorkerPool::~WorkerPool() { stop(); }

pid_t WorkerPool::spawn(int worker_index) {
  // Build argv before fork: the child may only call async-signal-safe functions.
  const std::vector<std::string> args = argv_for_(worker_index);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork of rollout worker");
  if (pid == 0) {
    // Until exec, this is a copy of the parent: its signal handlers must not run here.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent_pid_) ::_exit(0);  // the parent died before prctl took effect
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int WorkerPool::poll() {
  int died = 0;
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (pids_[i] <= 0) continue;
    int status = 0;
    const pid_t done = ::waitpid(pids_[i], &status, WNOHANG);
    if (done != pids_[i]) continue;
    ++died;
    ++deaths_;
    pids_[i] = -1;
    const bool clean_exit = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (clean_exit) {
      ++clean_exits_;  // told to stop: not a failure, not restarted
    } else if (restarts_ < options_.max_restarts) {
      ++restarts_;
      pids_[i] = spawn(static_cast<int>(i));
    }
  }
  return died;
}

int WorkerPool::num_running() const {
  int running = 0;
  for (pid_t p : pids_) running += p > 0;
  return running;
}

void WorkerPool::stop() {
  for (pid_t p : pids_) {
    if (p > 0) ::kill(p, SIGTERM);
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.stop_grace;
  while (num_running() > 0) {
    for (pid_t& p : pids_) {
      if (p > 0 && ::waitpid(p, nullptr, WNOHANG) == p) p = -1;
    }
    if (num_running() == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (pid_t& p : pids_) {
        if (p <= 0) continue;
        ::kill(p, SIGKILL);
        ::waitpid(p, nullptr, 0);
        p = -1;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace rlx
