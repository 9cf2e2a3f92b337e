#include "core/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>

namespace rlx {

std::string ChildExit::describe() const {
  if (signaled) return std::string("killed by signal ") + std::to_string(code) + " (" + strsignal(code) + ")";
  return "exit status " + std::to_string(code);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log,
                           const std::string& banner)
    : log_(log) {
  int fd = -1;
  if (!log.empty()) {
    if (log.has_parent_path()) std::filesystem::create_directories(log.parent_path());
    fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + log.string());
    if (!banner.empty()) {
      const std::string line = banner + "\n";
      if (::write(fd, line.data(), line.size()) < 0) {
        const int error = errno;
        ::close(fd);
        throw std::system_error(error, std::generic_category(), "write " + log.string());
      }
    }
  }
  // Build argv before fork: the child may only call async-signal-safe functions.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw std::system_error(error, std::generic_category(), "fork of " + argv.at(0));
  }
  if (pid_ == 0) {
    // Until exec, this is a copy of the parent: its signal handlers must not run here, and
    // the stop signals it blocks (core/stop_signal.h) must reach the program.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
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
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (fd >= 0) ::close(fd);
}

ChildProcess::~ChildProcess() { kill(); }

std::optional<ChildExit> ChildProcess::poll() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done != pid_) return std::nullopt;
  exit_ = WIFSIGNALED(status) ? ChildExit{true, WTERMSIG(status)} : ChildExit{false, WEXITSTATUS(status)};
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
  exit_ = WIFSIGNALED(status) ? ChildExit{true, WTERMSIG(status)} : ChildExit{false, WEXITSTATUS(status)};
}

ChildExit ChildProcess::stop(std::chrono::milliseconds grace) {
  terminate();
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!poll() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill();
  return *exit_;
}

std::vector<std::string> tail_lines(const std::filesystem::path& file, size_t max_lines) {
  constexpr std::streamoff kMaxBytes = 64 * 1024;
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = std::max<std::streamoff>(0, size - kMaxBytes);
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  if (start > 0 && !lines.empty()) lines.erase(lines.begin());  // a partial first line
  if (lines.size() > max_lines) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(max_lines));
  return lines;
}

}  // namespace rlx
