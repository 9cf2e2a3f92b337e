// WorkerStops: what the learner makes of the reasons workers give in their goodbyes. It counts
// every stop by cause, groups the details into distinct reasons (numbers masked, so "step 40"
// and "step 41" are one reason), says each distinct reason once in a notice with the first
// worker that gave it, and keeps a summary for the end of the run. The reasons are untrusted:
// at most kMaxDistinctStopReasons are kept (later ones only counted) and at most
// kMaxStopNotices notices are given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "transport/stop_reason.h"

namespace rlx {

constexpr size_t kMaxDistinctStopReasons = 256;
constexpr size_t kMaxStopNotices = 32;

// A line to print about a worker's stop, with its cause (a signal is worth less than a failure).
struct StopNotice {
  StopCause cause;
  std::string text;  // "WHO stopped: CAUSE: DETAIL"
};

class WorkerStops {
 public:
  // Counts a worker's stop; `who` names it ("worker 7 (pid 12 on node3)"). Returns the notice to
  // print when its reason is new (and notices are left), nullopt otherwise.
  std::optional<StopNotice> record(const StopReason& reason, const std::string& who);

  // Workers that stopped for each failure cause, by stop_cause_name (signals are not failures).
  const std::map<std::string, uint64_t>& failures() const { return failures_; }
  // Workers that stopped for a failure, every cause together.
  uint64_t failed() const { return failed_; }

  // Lines for the end of a run: one per distinct failure reason, most frequent first (with its
  // count and the first worker), and one for failures whose reasons were only counted; empty
  // when no worker failed.
  std::vector<std::string> summary() const;

 private:
  struct Distinct {
    StopCause cause;
    std::string detail;  // the first one given
    std::string first_who;
    uint64_t count = 0;
    size_t order = 0;
  };
  std::map<std::string, Distinct> distinct_;  // by cause and masked detail
  std::map<std::string, uint64_t> failures_;
  uint64_t failed_ = 0;
  uint64_t failed_uncounted_ = 0;  // failures whose reason found no room in distinct_
  size_t notices_ = 0;
};

}  // namespace rlx
