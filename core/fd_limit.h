// The open-file limit (RLIMIT_NOFILE) of a process that serves many workers: the learner's
// ROUTER holds one descriptor per worker connection (tcp or ipc alike), so 1,000 workers need
// more than the common soft limit of 1,024. Header-only, so that torch-free and transport-only
// targets can use it.
#pragma once

#include <sys/resource.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>

namespace rlx {

// Raises this process's soft RLIMIT_NOFILE to its hard limit; returns the soft limit now in
// force (RLIM_INFINITY when unlimited). Throws std::system_error when getrlimit or setrlimit fails.
inline rlim_t raise_fd_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) throw std::system_error(errno, std::generic_category(), "getrlimit(RLIMIT_NOFILE)");
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      throw std::system_error(errno, std::generic_category(), "setrlimit(RLIMIT_NOFILE) to the hard limit");
    }
  }
  return limit.rlim_cur;
}

// Raises the soft limit to the hard one and throws std::runtime_error, naming `who`, the
// descriptors needed and the limit, when even the hard limit is below `needed`.
inline void require_fd_limit(uint64_t needed, const std::string& who) {
  const rlim_t limit = raise_fd_limit();
  if (limit != RLIM_INFINITY && static_cast<uint64_t>(limit) < needed) {
    throw std::runtime_error(who + " needs about " + std::to_string(needed) +
                             " file descriptors (one per worker connection), but the hard limit of open files "
                             "(RLIMIT_NOFILE) is " + std::to_string(limit) +
                             ": raise it (`ulimit -Hn`, /etc/security/limits.conf or systemd's LimitNOFILE) or use "
                             "fewer workers");
  }
}

}  // namespace rlx
