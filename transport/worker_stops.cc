#include "transport/worker_stops.h"

#include <algorithm>
#include <cctype>

namespace rlx {

namespace {

// The detail with each run of digits as '#': the key that groups reasons differing only in
// numbers (steps, pids, addresses).
std::string masked(const std::string& detail) {
  std::string key;
  key.reserve(detail.size());
  for (const char c : detail) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (key.empty() || key.back() != '#') key += '#';
    } else {
      key += c;
    }
  }
  return key;
}

}  // namespace

std::optional<StopNotice> WorkerStops::record(const StopReason& reason, const std::string& who) {
  const bool failure = is_failure(reason.cause);
  if (failure) {
    ++failed_;
    ++failures_[stop_cause_name(reason.cause)];
  }
  const std::string key = std::string(stop_cause_name(reason.cause)) + ": " + masked(reason.detail);
  auto it = distinct_.find(key);
  if (it != distinct_.end()) {
    ++it->second.count;
    return std::nullopt;
  }
  if (distinct_.size() >= kMaxDistinctStopReasons) {
    if (failure) ++failed_uncounted_;
    return std::nullopt;
  }
  distinct_.emplace(key, Distinct{reason.cause, reason.detail, who, 1, distinct_.size()});
  if (notices_ >= kMaxStopNotices) return std::nullopt;
  std::string notice = who + " stopped: " + stop_cause_name(reason.cause) + ": " + reason.detail;
  if (++notices_ == kMaxStopNotices) notice += " (further distinct reasons are only counted)";
  return StopNotice{reason.cause, std::move(notice)};
}

std::vector<std::string> WorkerStops::summary() const {
  std::vector<const Distinct*> reasons;
  for (const auto& [key, reason] : distinct_) {
    if (is_failure(reason.cause)) reasons.push_back(&reason);
  }
  std::sort(reasons.begin(), reasons.end(), [](const Distinct* a, const Distinct* b) {
    return a->count != b->count ? a->count > b->count : a->order < b->order;
  });
  std::vector<std::string> lines;
  for (const Distinct* reason : reasons) {
    lines.push_back(std::to_string(reason->count) + " x " + stop_cause_name(reason->cause) + ": " + reason->detail +
                    " (first: " + reason->first_who + ")");
  }
  if (failed_uncounted_ > 0) {
    lines.push_back(std::to_string(failed_uncounted_) + " x a reason not kept (more than " +
                    std::to_string(kMaxDistinctStopReasons) + " distinct reasons)");
  }
  return lines;
}

}  // namespace rlx
