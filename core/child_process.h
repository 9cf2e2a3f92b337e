// ChildProcess: rlx's one way of starting a process (trial segments, rollout workers): fork +
// exec with PR_SET_PDEATHSIG(SIGKILL), so the child dies with its parent even on SIGKILL, in a
// process group of its own, so a terminal's Ctrl-C reaches only its parent, which stops it;
// stdout and stderr appended to a log file (or inherited); polled without blocking; stopped
// (SIGTERM, then SIGKILL) and reaped on destruction.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rlx {

// How a child ended.
struct ChildExit {
  bool signaled = false;
  int code = 0;  // the exit status, or the signal number when signaled
  // "exit status 1" or "killed by signal 11 (Segmentation fault)".
  std::string describe() const;
  bool clean() const { return !signaled && code == 0; }
};

class ChildProcess {
 public:
  // Starts argv (argv[0] a path, executed directly) with stdout and stderr appended to `log`
  // (its folder is created), or inherited when `log` is empty. A non-empty `banner` line is
  // appended to the log first. std::system_error when the log cannot be opened or fork fails.
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log, const std::string& banner = "");
  // Stops it (stop() with no grace) if it still runs.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit, once it happened (reaps it); nullopt while it runs.
  std::optional<ChildExit> poll();
  // Sends SIGTERM (once) if it still runs; poll() tells when it has exited.
  void terminate();
  // SIGKILLs and reaps it if it still runs.
  void kill();
  // terminate(), waits up to `grace` for it to exit, then kill(); returns how it ended.
  ChildExit stop(std::chrono::milliseconds grace);

  pid_t pid() const { return pid_; }
  const std::filesystem::path& log() const { return log_; }

 private:
  pid_t pid_ = -1;
  std::filesystem::path log_;
  bool terminated_ = false;
  std::optional<ChildExit> exit_;
};

// The last `max_lines` lines of a text file (all of them when shorter; empty when it cannot be
// read), read from at most its last 64 KiB.
std::vector<std::string> tail_lines(const std::filesystem::path& file, size_t max_lines);

}  // namespace rlx
