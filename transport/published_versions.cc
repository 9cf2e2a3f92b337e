#include "transport/published_versions.h"

#include <algorithm>

namespace rlx {

void PublishedVersions::publish(std::shared_ptr<const Weights> weights) {
  latest_ = std::move(weights);
  if (!first_) first_ = latest_->policy_version;
  versions_.push_back(latest_->policy_version);
  if (versions_.size() > kMaxVersionsKept) versions_.pop_front();
}

bool PublishedVersions::stale(uint64_t version) const {
  const uint64_t current = latest_version();
  return current > version && current - version > max_policy_lag_;
}

bool PublishedVersions::published(uint64_t version) const {
  if (!first_ || version < *first_ || version > latest_version()) return false;
  // Older than every version remembered: published long ago (versions only grow).
  if (version < versions_.front()) return true;
  // Published in increasing order, so the deque is sorted.
  return std::binary_search(versions_.begin(), versions_.end(), version);
}

}  // namespace rlx
