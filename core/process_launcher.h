// ProcessLauncher: how rlx starts the processes it supervises (rollout workers, learner ranks,
// tune trials, replays). A launcher turns a ProcessSpec into a LaunchedProcess that the caller
// polls, stops and reads the log of, whichever engine runs it: local fork/exec
// (core/child_process.h, the default) or, later, a cluster's job steps.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rlx {

// What to start.
struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] a path, executed directly
  // Set in the process only, on top of this process's environment (a name given twice: the last).
  std::vector<std::pair<std::string, std::string>> env;
  // stdout and stderr are appended here (its folder is created); empty: inherited.
  std::filesystem::path log;
  std::string banner;  // a line appended to the log before the process starts ("" for none)
};

// How a process ended.
struct ChildExit {
  bool signaled = false;
  int code = 0;  // the exit status, or the signal number when signaled
  // "exit status 1" or "killed by signal 11 (Segmentation fault)".
  std::string describe() const;
  bool clean() const { return !signaled && code == 0; }
};

// A started process. Destroying it kills it if it still runs.
class LaunchedProcess {
 public:
  virtual ~LaunchedProcess() = default;

  // The exit, once it happened; nullopt while it runs. Never blocks.
  virtual std::optional<ChildExit> poll() = 0;
  // Asks it to stop (SIGTERM, once) if it still runs; poll() tells when it has exited.
  virtual void terminate() = 0;
  // Ends it at once (SIGKILL) if it still runs, and waits until it has.
  virtual void kill() = 0;
  // Its process id (on this host for a local launcher); -1 when it has none.
  virtual pid_t pid() const = 0;
  // Where its output goes; empty when inherited.
  virtual const std::filesystem::path& log() const = 0;

  // terminate(), waits up to `grace` for it to exit, then kill(); returns how it ended.
  ChildExit stop(std::chrono::milliseconds grace);
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts `spec`; std::system_error (or another std::exception naming the spec's program) when
  // it cannot.
  virtual std::unique_ptr<LaunchedProcess> launch(const ProcessSpec& spec) = 0;
};

// The process-wide local fork/exec launcher (core/child_process.h).
ProcessLauncher& local_launcher();

// Starts each process through a command that runs it elsewhere: `srun --exact -N1 -n1 -c2`
// gives each a job step of its own inside a Slurm allocation. The prefix's program is looked up
// on PATH; stopping the launched process signals that command (srun passes SIGTERM on to its
// task, and ends the step when it is killed).
class CommandPrefixLauncher : public ProcessLauncher {
 public:
  // std::invalid_argument when `prefix` is empty or its program is not on PATH.
  explicit CommandPrefixLauncher(std::vector<std::string> prefix);
  std::unique_ptr<LaunchedProcess> launch(const ProcessSpec& spec) override;
  const std::vector<std::string>& prefix() const { return prefix_; }

 private:
  std::vector<std::string> prefix_;  // [0] resolved to a path
};

// "srun --exact -n1" -> {"srun", "--exact", "-n1"}: split at whitespace (no quoting).
std::vector<std::string> split_command_prefix(const std::string& text);

// `launcher`, or the local one when it is null.
inline ProcessLauncher& launcher_or_local(ProcessLauncher* launcher) { return launcher ? *launcher : local_launcher(); }

// The last `max_lines` lines of a text file (all of them when shorter; empty when it cannot be
// read), read from at most its last 64 KiB.
std::vector<std::string> tail_lines(const std::filesystem::path& file, size_t max_lines);

// A banner line for a process's log, "=== 2026-11-30 11:05:42: TEXT ===" (local time), written
// before each start so that its lines can be told from an earlier start's.
std::string log_banner(const std::string& text);
// The lines a process wrote to its log since the latest banner, at most `max_lines` of them.
std::vector<std::string> lines_since_banner(const std::filesystem::path& log, size_t max_lines);

}  // namespace rlx
