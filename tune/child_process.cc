// Trial processes.
#include "tune/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace rlx {

std::string ChildExit::describe() const {
  if (signaled) return std::string("killed by signal ") + std::to_string(code) + " (" + strsignal(code) + ")";
  return "exit status " + std::to_string(code);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  std::filesystem::create_directories(log.parent_path());
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + log.string());
  // Build argv before fork: the child may only call async-signal-safe functions.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    const int error = errno;
    ::close(fd);
    throw std::system_error(error, std::generic_category(), "fork of a trial process");
  }
  if (pid_ == 0) {
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);  // the tuner died before prctl took effect
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fd);
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

void ChildProcess::kill() {
  if (exit_ || pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  exit_ = ChildExit{true, SIGKILL};
}

}  // namespace rlx
