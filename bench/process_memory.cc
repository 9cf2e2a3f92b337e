#include "bench/process_memory.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <map>
#include <stdexcept>
#include <string>

namespace rlx {

ProcessMemory read_process_memory(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::map<std::string, long> fields;  // "Name:   N kB" lines, in kB
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.find(" kB") == std::string::npos) continue;
    fields[line.substr(0, colon)] = std::stol(line.substr(colon + 1));
  }
  if (!fields.count("Rss") || !fields.count("Pss") || !fields.count("Private_Dirty")) {
    throw std::runtime_error("cannot read /proc/" + std::to_string(pid) + "/smaps_rollup");
  }
  return {fields["Rss"], fields["Pss"], fields["Private_Dirty"]};
}

double read_process_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const size_t name_end = line.rfind(')');  // the command name may hold spaces
  if (name_end == std::string::npos) throw std::runtime_error("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(line.substr(name_end + 2));
  std::string field;
  unsigned long long user = 0, system = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15: utime and stime, in ticks
    if (i == 14) user = std::stoull(field);
    if (i == 15) system = std::stoull(field);
  }
  if (!fields) throw std::runtime_error("cannot read /proc/" + std::to_string(pid) + "/stat");
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double own_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

}  // namespace rlx
