#include "bench/process_memory.h"

#include <algorithm>
#include <fstream>
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

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

}  // namespace rlx
