// A child process for one trial segment: fork + exec with its output appended to a log file,
// PR_SET_PDEATHSIG(SIGKILL) so it dies with the tuner (even on SIGKILL), polled without
// blocking, killed and reaped on destruction.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rlx {

// How a child ended.
struct ChildExit {
  bool signaled = false;
  int code = 0;  // the exit status, or the signal number when signaled
  std::string describe() const;
};

class ChildProcess {
 public:
  // Starts argv (argv[0] a path, executed directly) with stdout and stderr appended to `log`;
  // std::system_error when the log cannot be opened or fork fails.
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit, once it happened (reaps it); nullopt while it runs.
  std::optional<ChildExit> poll();
  // SIGKILLs and reaps it if it still runs.
  void kill();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<ChildExit> exit_;
};

}  // namespace rlx
