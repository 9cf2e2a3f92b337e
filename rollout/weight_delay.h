// WeightDelay: holds back published weights so that a worker acts with those published `delay`
// publications before the newest (worker_weight_delay: an ablation's stale workers). With delay
// 0 every publication is used at once. It counts the publications the worker receives: the
// learner's receiver sends the newest weights once for publications that come faster than it
// can send them.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>

#include "transport/messages.h"

namespace rlx {

class WeightDelay {
 public:
  explicit WeightDelay(int delay) : delay_(delay < 0 ? 0 : static_cast<size_t>(delay)) {}

  // Takes a publication; returns the weights to act with now: the oldest of the last delay + 1
  // received (the first ones are used until that many have come).
  std::shared_ptr<const Weights> push(std::shared_ptr<const Weights> weights) {
    held_.push_back(std::move(weights));
    while (held_.size() > delay_ + 1) held_.pop_front();
    return held_.front();
  }

  // Forgets every publication held (a worker that joins a learner again starts afresh).
  void clear() { held_.clear(); }

 private:
  size_t delay_;
  std::deque<std::shared_ptr<const Weights>> held_;
};

}  // namespace rlx
