// Graceful stops on SIGTERM and SIGINT (a scheduler's preemption, Ctrl-C). While a StopSignals
// object lives, the first such signal only sets a flag that long-running loops read at their
// safe points (stop_requested()) and arms a watchdog; a second signal, or the watchdog when
// the grace period has passed, ends the process at once, by that signal's default action,
// after removing the files registered with RemoveOnSignal (secret keys). Everything the
// handlers do is async-signal-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx {

// Environment variable: seconds from the first signal until the watchdog ends the process.
constexpr const char* kStopGraceEnv = "RLX_STOP_GRACE_S";
constexpr int kDefaultStopGraceS = 60;
// Environment variable a supervising rlx process (rlx tune) sets for its children to its own pid:
// a stop signal it forwards never counts as the child's second signal, even when the child got
// the same signal from elsewhere first (a scheduler signalling every process of a job).
constexpr const char* kStopSupervisorEnv = "RLX_STOP_SUPERVISOR_PID";

// Thrown by blocking work that gives up because the stop is overdue (stop_overdue()).
class StopRequested : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Installs the handlers for SIGTERM, SIGINT (stop) and SIGABRT (removal of registered files
// before the abort) and a thread that decides (and is the watchdog) for its lifetime; blocks the
// stop signals in the calling thread, so install it before starting other threads. One at a
// time per process (std::logic_error otherwise). A signal ignored at installation stays ignored.
class StopSignals {
 public:
  // `grace`: how long after the first signal the watchdog lets the process run; `plan`: what the
  // process does on the first signal, for the line it prints then ("finishing the current
  // iteration, then writing a checkpoint").
  StopSignals(std::chrono::seconds grace, const std::string& plan);
  // Restores the dispositions found at construction, disarms the watchdog and clears the flag.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  std::chrono::seconds grace() const { return grace_; }

 private:
  std::chrono::seconds grace_;
};

// The grace period RLX_STOP_GRACE_S sets (whole seconds >= 1), kDefaultStopGraceS when unset;
// ConfigError naming the variable and the value otherwise.
std::chrono::seconds stop_grace_from_env();

// True once a first SIGTERM or SIGINT arrived while a StopSignals was installed.
bool stop_requested();
// The signal that asked for the stop (SIGTERM or SIGINT); 0 when none did.
int stop_signal();
// "SIGTERM", "SIGINT", or "signal N".
const char* stop_signal_name(int signal);
// True once a stop has been pending for half the grace period: blocking work that has not
// finished by then should give up (throw StopRequested) so the process can still end cleanly.
bool stop_overdue();

// Registers paths that the signal paths (second signal, watchdog, abort) remove, for its
// lifetime: `dir` and the files directly inside it now (at most 16 paths in all;
// std::length_error beyond). Normal and exception exits leave removal to the owner (TempDir);
// a SIGKILL leaves them.
class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(const std::filesystem::path& dir);
  ~RemoveOnSignal();
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;

 private:
  void release();
  std::vector<int> slots_;
};

}  // namespace rlx
