#include "core/child_process.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace rlx {

namespace {

// This process's environment with `extra` set on top, as "NAME=VALUE" strings.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) entries.emplace_back(*entry);
  for (const auto& [name, value] : extra) {
    if (name.empty() || name.find('=') != std::string::npos) {
      throw std::invalid_argument("environment variable name '" + name + "' is empty or holds '='");
    }
    const std::string start = name + "=";
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [&](const std::string& e) { return e.compare(0, start.size(), start) == 0; }),
                  entries.end());
    entries.push_back(start + value);
  }
  return entries;
}

std::vector<char*> pointers_to(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// The child's log opened for appending, with the banner written (-1 without a log);
// std::system_error naming the file when it cannot be opened or written.
int open_log(const std::filesystem::path& log, const std::string& banner) {
  if (log.empty()) return -1;
  if (log.has_parent_path()) std::filesystem::create_directories(log.parent_path());
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + log.string());
  if (!banner.empty()) {
    const std::string line = banner + "\n";
    if (::write(fd, line.data(), line.size()) < 0) {
      const int error = errno;
      ::close(fd);
      throw std::system_error(error, std::generic_category(), "write " + log.string());
    }
  }
  return fd;
}

// vfork, then in the child: default stop-signal handlers, no blocked signals, a process group
// of its own, death with the parent, stdout and stderr on fd (unless -1), exec. Returns the
// child's pid, or -1 with errno set. Only system calls on its arguments run in the child.
pid_t vfork_exec(char* const* args, char* const* envp, int fd, pid_t parent) {
  const pid_t pid = ::vfork();
  if (pid == 0) {
    // Until exec, this runs on the parent's memory: its signal handlers must not run here, and
    // the stop signals it blocks (core/stop_signal.h) must reach the program.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGABRT, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // A process group of its own: a terminal's Ctrl-C reaches only the rlx process on top,
    // which stops its children in order (they die with it all the same: PDEATHSIG).
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);  // the parent died before prctl took effect
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execve(args[0], args, envp);
    ::_exit(127);
  }
  return pid;
}

ChildExit exit_of(int status) {
  return WIFSIGNALED(status) ? ChildExit{true, WTERMSIG(status)} : ChildExit{false, WEXITSTATUS(status)};
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log,
                           const std::string& banner)
    : ChildProcess(ProcessSpec{argv, {}, log, banner}) {}

ChildProcess::ChildProcess(const ProcessSpec& spec) : log_(spec.log) {
  if (spec.argv.empty()) throw std::invalid_argument("a process to start needs argv[0]");
  // Everything the child needs is built before vfork_exec: it may only make system calls.
  const std::vector<std::string> environment = child_environment(spec.env);
  std::vector<char*> envp = pointers_to(environment);
  std::vector<char*> args = pointers_to(spec.argv);
  const int fd = open_log(log_, spec.banner);
  const pid_t parent = ::getpid();
  // vfork, not fork: the child borrows this process's memory until exec instead of copying its
  // page tables. A LibTorch process (rlx-torch) takes tens of ms per fork, during which its
  // other threads (the sample receiver) stall on the memory map and then on copy-on-write
  // faults: starting 1,000 workers that way starved the receiver for a minute. So the child
  // (vfork_exec) only makes system calls on values built here, and writes no memory we use.
  // Every signal is blocked across the start: one that comes before the child has reset its
  // dispositions (a terminate() right after the start) waits and then takes its default action
  // instead of running this process's handler in the child, or being lost at exec.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = vfork_exec(args.data(), envp.data(), fd, parent);
  if (pid < 0) {
    const int error = errno;
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (fd >= 0) ::close(fd);
    throw std::system_error(error, std::generic_category(), "vfork of " + spec.argv.front());
  }
  pid_ = pid;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (fd >= 0) ::close(fd);
}

ChildProcess::~ChildProcess() { kill(); }

std::optional<ChildExit> ChildProcess::poll() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done != pid_) return std::nullopt;
  exit_ = exit_of(status);
  return exit_;
}

void ChildProcess::terminate() {
  if (exit_ || pid_ <= 0 || terminated_) return;
  ::kill(pid_, SIGTERM);
  terminated_ = true;
}

void ChildProcess::kill() {
  if (exit_ || pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  exit_ = exit_of(status);
}

std::unique_ptr<LaunchedProcess> LocalLauncher::launch(const ProcessSpec& spec) {
  return std::make_unique<ChildProcess>(spec);
}

ProcessLauncher& local_launcher() {
  static LocalLauncher launcher;
  return launcher;
}

namespace {

// `program` if it holds a '/', else the first executable of that name on PATH; nullopt when none.
std::optional<std::string> find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? std::optional(program) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> split_command_prefix(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

CommandPrefixLauncher::CommandPrefixLauncher(std::vector<std::string> prefix) : prefix_(std::move(prefix)) {
  if (prefix_.empty()) throw std::invalid_argument("a launch prefix needs a program, e.g. \"srun --exact -n1\"");
  const std::optional<std::string> program = find_program(prefix_[0]);
  if (!program) throw std::invalid_argument("launch prefix program '" + prefix_[0] + "' is not an executable on PATH");
  prefix_[0] = *program;
}

std::unique_ptr<LaunchedProcess> CommandPrefixLauncher::launch(const ProcessSpec& spec) {
  ProcessSpec prefixed = spec;
  prefixed.argv.insert(prefixed.argv.begin(), prefix_.begin(), prefix_.end());
  return local_launcher().launch(prefixed);
}

}  // namespace rlx
