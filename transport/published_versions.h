// PublishedVersions: the weights a learner published for one policy, and which versions it
// published, for the receiver's fragment checks (a version never published is refused, one more
// than max_policy_lag behind the latest is stale). Not thread-safe: the receiver guards it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "models/weights.h"

namespace rlx {

class PublishedVersions {
 public:
  explicit PublishedVersions(uint64_t max_policy_lag) : max_policy_lag_(max_policy_lag) {}

  // Makes these the latest weights (versions only grow).
  void publish(std::shared_ptr<const Weights> weights);
  // The latest weights; null before the first publication.
  const std::shared_ptr<const Weights>& latest() const { return latest_; }
  uint64_t latest_version() const { return latest_ ? latest_->policy_version : 0; }
  // More than max_policy_lag versions behind the latest.
  bool stale(uint64_t version) const;
  // Published at some point (remembered exactly for the last kMaxVersionsKept publications).
  bool published(uint64_t version) const;

  static constexpr size_t kMaxVersionsKept = 4096;

 private:
  uint64_t max_policy_lag_;
  std::shared_ptr<const Weights> latest_;
  std::optional<uint64_t> first_;
  std::deque<uint64_t> versions_;  // the latest ones, oldest first
};

}  // namespace rlx
