// ChildProcess: the local fork/exec LaunchedProcess (core/process_launcher.h), and
// LocalLauncher, which starts them. A child gets PR_SET_PDEATHSIG(SIGKILL), so it dies with its
// parent even on SIGKILL, and a process group of its own, so a terminal's Ctrl-C reaches only
// its parent, which stops it; its stdout and stderr are appended to a log file (or inherited);
// it is polled without blocking, stopped (SIGTERM, then SIGKILL) and reaped on destruction.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/process_launcher.h"

namespace rlx {

class ChildProcess final : public LaunchedProcess {
 public:
  // Starts spec.argv with spec.env added to this process's environment, its output appended to
  // spec.log after spec.banner. std::system_error when the log cannot be opened or vfork fails.
  explicit ChildProcess(const ProcessSpec& spec);
  // ChildProcess({argv, {}, log, banner}).
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log, const std::string& banner = "");
  // Kills it if it still runs.
  ~ChildProcess() override;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  std::optional<ChildExit> poll() override;
  void terminate() override;
  void kill() override;
  pid_t pid() const override { return pid_; }
  const std::filesystem::path& log() const override { return log_; }

 private:
  pid_t pid_ = -1;
  std::filesystem::path log_;
  bool terminated_ = false;
  std::optional<ChildExit> exit_;
};

// Starts ChildProcesses on this host.
class LocalLauncher final : public ProcessLauncher {
 public:
  std::unique_ptr<LaunchedProcess> launch(const ProcessSpec& spec) override;
};

}  // namespace rlx
