// A process's memory as Linux accounts it in /proc/PID/smaps_rollup: resident (RSS), its
// proportional share of pages it shares with others (PSS: N processes sharing a page each count
// 1/N of it, so PSS sums to the real total), and its private dirty pages.
#pragma once

#include <sys/types.h>

#include <vector>

namespace rlx {

struct ProcessMemory {
  long rss_kb = 0;
  long pss_kb = 0;
  long private_dirty_kb = 0;
};

// Reads /proc/PID/smaps_rollup; throws std::runtime_error when the process is gone or unreadable.
ProcessMemory read_process_memory(pid_t pid);

// CPU seconds (user + system) PID has used so far, from /proc/PID/stat (clock-tick resolution);
// throws std::runtime_error when the process is gone or unreadable.
double read_process_cpu_seconds(pid_t pid);

// CPU seconds (user + system) this process has used so far, all threads.
double own_cpu_seconds();

// The median of values (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values);

}  // namespace rlx
