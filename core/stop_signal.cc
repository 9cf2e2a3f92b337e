// Stop signals: the handlers only pass the signal on through a pipe; a thread of our own takes
// the decisions (first signal, repeat, watchdog) outside signal context. The stop signals are
// blocked in the installing thread, so every thread started after it (ZeroMQ's, Gloo's, the
// samplers') inherits the block and never sees EINTR from them.
#include "core/stop_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "core/config_error.h"

namespace rlx {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kStopSignals[] = {SIGTERM, SIGINT};
constexpr size_t kMaxRemovals = 16;
constexpr size_t kMaxPath = 4096;

// What a handler passes to the decision thread; signo 0 asks the thread to quit.
struct Delivery {
  int signo;
  pid_t sender;
};

struct Removal {
  std::atomic<bool> claimed{false};
  std::atomic<bool> armed{false};
  char path[kMaxPath];
};

std::atomic<bool> g_installed{false};
std::atomic<int> g_signal{0};
std::atomic<Clock::rep> g_requested_at{0};
std::atomic<int64_t> g_grace_s{kDefaultStopGraceS};
int g_pipe[2] = {-1, -1};
std::array<Removal, kMaxRemovals> g_removals;

// Async-signal-safe: unlinks the armed files, then removes the armed (now empty) folders.
void remove_registered() {
  for (Removal& removal : g_removals) {
    if (removal.armed.load(std::memory_order_acquire)) ::unlink(removal.path);
  }
  for (Removal& removal : g_removals) {
    if (removal.armed.load(std::memory_order_acquire)) ::rmdir(removal.path);
  }
}

void write_stderr(const char* text) {
  const ssize_t ignored = ::write(2, text, std::strlen(text));
  (void)ignored;
}

// Ends the process by `signo`'s default action (the status a shell reports as 128 + signo).
[[noreturn]] void die_by(int signo) {
  remove_registered();
  ::signal(signo, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signo);
  ::_exit(128 + signo);
}

void on_stop_signal(int signo, siginfo_t* info, void*) {
  const int saved = errno;
  const Delivery delivery{signo, info ? info->si_pid : 0};
  if (::write(g_pipe[1], &delivery, sizeof delivery) != static_cast<ssize_t>(sizeof delivery)) die_by(signo);
  errno = saved;
}

void on_abort(int) { die_by(SIGABRT); }

pid_t supervisor_pid() {
  const char* text = std::getenv(kStopSupervisorEnv);
  if (!text) return 0;
  char* end = nullptr;
  const long pid = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && pid > 0 ? static_cast<pid_t>(pid) : 0;
}

// The decision thread: the first stop signal sets the flag; a repeat (not the supervisor's
// forward) or the watchdog's deadline ends the process.
void decide(pid_t supervisor, std::string plan) {
  sigset_t set;
  sigemptyset(&set);
  for (int signo : kStopSignals) sigaddset(&set, signo);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);  // the handlers run here (or in older threads)
  std::optional<Clock::time_point> deadline;
  for (;;) {
    int timeout_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      timeout_ms = static_cast<int>(std::max<int64_t>(0, left));
    }
    pollfd item{g_pipe[0], POLLIN, 0};
    const int ready = ::poll(&item, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 && deadline) {
      const std::string text = "rlx: the stop took longer than " + std::to_string(g_grace_s.load()) + " s (" +
                               kStopGraceEnv + "); exiting now\n";
      write_stderr(text.c_str());
      die_by(g_signal.load());
    }
    Delivery delivery{};
    if (::read(g_pipe[0], &delivery, sizeof delivery) != static_cast<ssize_t>(sizeof delivery)) continue;
    if (delivery.signo == 0) return;
    if (g_signal.load() == 0) {
      g_requested_at.store(Clock::now().time_since_epoch().count());
      g_signal.store(delivery.signo);
      deadline = Clock::now() + std::chrono::seconds(g_grace_s.load());
      const std::string text = std::string("\nrlx: ") + stop_signal_name(delivery.signo) + ": " + plan +
                               " (a second signal stops at once)\n";
      write_stderr(text.c_str());
      continue;
    }
    if (supervisor > 0 && delivery.sender == supervisor) continue;  // the supervisor passing the same stop on
    write_stderr((std::string("rlx: ") + stop_signal_name(delivery.signo) + " again: stopping at once\n").c_str());
    die_by(delivery.signo);
  }
}

std::thread g_decider;
struct sigaction g_previous[3];
sigset_t g_previous_mask;
bool g_handled[3] = {false, false, false};  // SIGTERM, SIGINT, SIGABRT: installed by us

}  // namespace

StopSignals::StopSignals(std::chrono::seconds grace, const std::string& plan) : grace_(grace) {
  if (g_installed.exchange(true)) throw std::logic_error("StopSignals is installed already in this process");
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) {
    g_installed = false;
    throw std::system_error(errno, std::generic_category(), "pipe for the stop signals");
  }
  ::fcntl(g_pipe[1], F_SETFL, O_NONBLOCK);
  g_grace_s = grace.count();
  g_signal = 0;
  const int handled[3] = {SIGTERM, SIGINT, SIGABRT};
  for (int i = 0; i < 3; ++i) {
    struct sigaction action {};
    sigemptyset(&action.sa_mask);
    if (handled[i] == SIGABRT) {
      action.sa_handler = on_abort;
    } else {
      action.sa_sigaction = on_stop_signal;
      action.sa_flags = SA_SIGINFO | SA_RESTART;
    }
    ::sigaction(handled[i], nullptr, &g_previous[i]);
    // A signal ignored when we started (SIGINT of a background job in a script) stays ignored.
    if (g_previous[i].sa_handler == SIG_IGN) continue;
    ::sigaction(handled[i], &action, nullptr);
    g_handled[i] = true;
  }
  sigset_t set;
  sigemptyset(&set);
  for (int signo : kStopSignals) sigaddset(&set, signo);
  ::pthread_sigmask(SIG_BLOCK, &set, &g_previous_mask);
  g_decider = std::thread(decide, supervisor_pid(), plan);
}

StopSignals::~StopSignals() {
  const Delivery quit{0, 0};
  while (::write(g_pipe[1], &quit, sizeof quit) < 0 && errno == EAGAIN) std::this_thread::yield();
  g_decider.join();
  const int handled[3] = {SIGTERM, SIGINT, SIGABRT};
  for (int i = 0; i < 3; ++i) {
    if (g_handled[i]) ::sigaction(handled[i], &g_previous[i], nullptr);
    g_handled[i] = false;
  }
  ::pthread_sigmask(SIG_SETMASK, &g_previous_mask, nullptr);
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
  g_signal = 0;
  g_installed = false;
}

std::chrono::seconds stop_grace_from_env() {
  const char* text = std::getenv(kStopGraceEnv);
  if (!text) return std::chrono::seconds(kDefaultStopGraceS);
  char* end = nullptr;
  errno = 0;
  const long long seconds = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || seconds < 1) {
    throw ConfigError(std::string(kStopGraceEnv) + "='" + text + "': expected whole seconds >= 1");
  }
  return std::chrono::seconds(seconds);
}

bool stop_requested() { return g_signal.load() != 0; }

int stop_signal() { return g_signal.load(); }

const char* stop_signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGABRT: return "SIGABRT";
    default: return "a signal";
  }
}

bool stop_overdue() {
  if (!stop_requested()) return false;
  const Clock::time_point since{Clock::duration(g_requested_at.load())};
  return Clock::now() - since >= std::chrono::seconds(g_grace_s.load()) / 2;
}

RemoveOnSignal::RemoveOnSignal(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> paths = {dir};
  for (const auto& entry : std::filesystem::directory_iterator(dir)) paths.push_back(entry.path());
  for (const auto& path : paths) {
    const std::string text = path.string();
    size_t slot = 0;
    while (slot < kMaxRemovals && g_removals[slot].claimed.exchange(true)) ++slot;
    if (slot == kMaxRemovals || text.size() >= kMaxPath) {
      if (slot < kMaxRemovals) g_removals[slot].claimed.store(false);
      release();
      throw std::length_error("cannot register " + text + " for removal on a signal (at most " +
                              std::to_string(kMaxRemovals) + " paths of under " + std::to_string(kMaxPath) + " bytes)");
    }
    std::memcpy(g_removals[slot].path, text.c_str(), text.size() + 1);
    g_removals[slot].armed.store(true, std::memory_order_release);
    slots_.push_back(static_cast<int>(slot));
  }
}

RemoveOnSignal::~RemoveOnSignal() { release(); }

void RemoveOnSignal::release() {
  for (int slot : slots_) {
    g_removals[static_cast<size_t>(slot)].armed.store(false, std::memory_order_release);
    g_removals[static_cast<size_t>(slot)].claimed.store(false);
  }
  slots_.clear();
}

}  // namespace rlx
