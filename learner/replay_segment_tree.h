// Segment trees over a fixed number of leaves for prioritized replay: a sum tree (total mass
// and prefix-sum search, for proportional sampling) and a min tree (the smallest priority,
// for the largest importance weight). Every update recomputes the path to the root from the
// children, so sums never drift with repeated updates. Values are doubles.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx {

// A complete binary tree whose internal nodes combine their two children with Combine.
template <typename Combine>
class SegmentTree {
 public:
  // capacity leaves, all set to neutral (the identity of Combine); throws when capacity < 1.
  SegmentTree(int64_t capacity, double neutral) : capacity_(capacity), neutral_(neutral) {
    if (capacity < 1) throw std::invalid_argument("SegmentTree needs capacity >= 1, got " + std::to_string(capacity));
    while (leaves_ < capacity) leaves_ *= 2;
    nodes_.assign(static_cast<size_t>(2 * leaves_), neutral);
  }

  // Sets leaf index (< capacity) to value and updates its ancestors.
  void set(int64_t index, double value) {
    check(index);
    auto node = static_cast<size_t>(index + leaves_);
    nodes_[node] = value;
    for (node /= 2; node >= 1; node /= 2) nodes_[node] = Combine()(nodes_[2 * node], nodes_[2 * node + 1]);
  }
  // The value at leaf index (< capacity).
  double get(int64_t index) const {
    check(index);
    return nodes_[static_cast<size_t>(index + leaves_)];
  }
  // Combine over all leaves.
  double reduce() const { return nodes_[1]; }
  int64_t capacity() const { return capacity_; }

 protected:
  void check(int64_t index) const {
    if (index < 0 || index >= capacity_) throw std::out_of_range("SegmentTree index " + std::to_string(index) + " out of range");
  }

  int64_t capacity_;
  int64_t leaves_ = 1;  // power of two >= capacity
  double neutral_;
  std::vector<double> nodes_;  // 1-based heap layout; leaves at [leaves_, 2 * leaves_)
};

struct SumCombine {
  double operator()(double a, double b) const { return a + b; }
};
struct MinCombine {
  double operator()(double a, double b) const { return a < b ? a : b; }
};

// Sums of non-negative values with prefix-sum search.
class SumTree : public SegmentTree<SumCombine> {
 public:
  explicit SumTree(int64_t capacity) : SegmentTree(capacity, 0.0) {}

  double total() const { return reduce(); }
  // The leaf i where sum(leaves < i) <= mass < sum(leaves <= i), never a zero leaf: masses at
  // or beyond the total (rounding) give the last leaf with a positive value. Throws
  // std::logic_error when the total is not positive.
  int64_t find_prefix_sum(double mass) const;
};

// Minimum over the leaves; unset leaves hold +infinity.
class MinTree : public SegmentTree<MinCombine> {
 public:
  explicit MinTree(int64_t capacity) : SegmentTree(capacity, std::numeric_limits<double>::infinity()) {}

  double min() const { return reduce(); }
};

}  // namespace rlx
