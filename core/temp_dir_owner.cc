#include "core/temp_dir_owner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace rlx {

namespace {

namespace fs = std::filesystem;

// A process's start time (clock ticks since boot), from /proc/PID/stat; nullopt when it is gone.
std::optional<unsigned long long> process_start_time(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return std::nullopt;
  // The name (field 2) is in parentheses and may hold spaces: count the fields after its ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int index = 3; index <= 22 && fields >> field; ++index) {
    if (index == 22) return std::stoull(field);
  }
  return std::nullopt;
}

// True when `owner` ("PID START") names a process that is still running.
bool owner_alive(const std::string& owner) {
  std::istringstream in(owner);
  std::string pid;
  unsigned long long start = 0;
  if (!(in >> pid >> start) || pid.find_first_not_of("0123456789") != std::string::npos) return true;  // unreadable: keep
  const std::optional<unsigned long long> now = process_start_time(pid);
  return now && *now == start;
}

}  // namespace

std::string temp_dir_owner_stamp() {
  const std::string pid = std::to_string(::getpid());
  const std::optional<unsigned long long> start = process_start_time(pid);
  if (!start) throw std::runtime_error("cannot read /proc/" + pid + "/stat for this process's start time");
  return pid + " " + std::to_string(*start);
}

void stamp_temp_dir_owner(const fs::path& dir) {
  const fs::path file = dir / kTempDirOwnerFile;
  std::ofstream out(file);
  out << temp_dir_owner_stamp() << "\n";
  if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
}

std::vector<fs::path> sweep_dead_temp_dirs(const std::vector<fs::path>& parents, const std::vector<std::string>& prefixes) {
  std::vector<fs::path> removed;
  std::set<fs::path> seen;  // the system's temp dir is often /tmp itself
  for (const fs::path& parent : parents) {
    std::error_code error;
    const fs::path canonical = fs::weakly_canonical(parent, error);
    if (error || !seen.insert(canonical).second) continue;
    for (fs::directory_iterator it(canonical, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      bool ours = false;
      for (const std::string& prefix : prefixes) ours = ours || name.rfind(prefix, 0) == 0;
      struct stat info {};
      if (!ours || ::lstat(it->path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid()) continue;
      std::ifstream owner_file(it->path() / kTempDirOwnerFile);
      std::string owner;
      if (!owner_file || !std::getline(owner_file, owner) || owner_alive(owner)) continue;
      std::error_code remove_error;
      fs::remove_all(it->path(), remove_error);
      if (!remove_error) removed.push_back(it->path());
    }
  }
  return removed;
}

}  // namespace rlx
