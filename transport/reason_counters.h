// ReasonCounters: thread-safe counts of events by reason (an enum of N values, each with a
// snake_case name), for the rejections and refusals a receiver counts and reports.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace rlx {

template <typename Reason, size_t N, const char* (*kName)(Reason)>
class ReasonCounters {
 public:
  // total_key names the total in snapshot(), e.g. "rejected_total".
  explicit ReasonCounters(const char* total_key) : total_key_(total_key) {}

  // Counts one event.
  void record(Reason reason) {
    const auto index = static_cast<size_t>(reason);
    if (index < N) counts_[index].fetch_add(1, std::memory_order_relaxed);
    total_.fetch_add(1, std::memory_order_relaxed);
  }
  // Events of this reason so far.
  uint64_t count(Reason reason) const {
    const auto index = static_cast<size_t>(reason);
    return index < N ? counts_[index].load(std::memory_order_relaxed) : 0;
  }
  // Events of any reason so far.
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }
  // One line "TOTAL_KEY=N first_reason=N ..." listing every reason.
  std::string snapshot() const {
    std::string line = std::string(total_key_) + "=" + std::to_string(total());
    for (size_t i = 0; i < N; ++i) {
      line += std::string(" ") + kName(static_cast<Reason>(i)) + "=" +
              std::to_string(counts_[i].load(std::memory_order_relaxed));
    }
    return line;
  }

 private:
  const char* total_key_;
  std::array<std::atomic<uint64_t>, N> counts_{};
  std::atomic<uint64_t> total_{0};
};

}  // namespace rlx
