#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/rng.h"
#include "learner/prioritized_replay.h"
#include "learner/replay_segment_tree.h"

namespace {

void add_numbered(rlx::ReplayBuffer& buffer, int count, int first = 0) {
  for (int i = first; i < first + count; ++i) {
    const float obs = static_cast<float>(i);
    rlx::Transition t;
    t.obs = &obs;
    t.next_obs = &obs;
    t.action = i;
    buffer.add_transition(t);
  }
}

}  // namespace

TEST_CASE("Sum and min trees: totals, prefix search and updates", "[learner][dqn][replay]") {
  rlx::SumTree sum(5);  // not a power of two: 8 leaves inside
  rlx::MinTree min(5);
  CHECK(sum.total() == 0.0);
  CHECK(min.min() == std::numeric_limits<double>::infinity());
  const std::vector<double> values = {1.0, 2.0, 0.5, 4.0, 2.5};
  for (int i = 0; i < 5; ++i) {
    sum.set(i, values[static_cast<size_t>(i)]);
    min.set(i, values[static_cast<size_t>(i)]);
  }
  CHECK(sum.total() == 10.0);
  CHECK(min.min() == 0.5);
  // Prefix boundaries: [0,1) -> 0, [1,3) -> 1, [3,3.5) -> 2, [3.5,7.5) -> 3, [7.5,10) -> 4.
  CHECK(sum.find_prefix_sum(0.0) == 0);
  CHECK(sum.find_prefix_sum(0.999) == 0);
  CHECK(sum.find_prefix_sum(1.0) == 1);
  CHECK(sum.find_prefix_sum(3.2) == 2);
  CHECK(sum.find_prefix_sum(3.5) == 3);
  CHECK(sum.find_prefix_sum(7.49) == 3);
  CHECK(sum.find_prefix_sum(9.99) == 4);
  CHECK(sum.find_prefix_sum(10.0) == 4);   // at the total: the last positive leaf
  CHECK(sum.find_prefix_sum(12.0) == 4);
  CHECK(sum.find_prefix_sum(-1.0) == 0);

  // Many updates: the root stays the exact sum of the leaves (recomputed, not accumulated).
  rlx::Rng rng(3);
  for (int round = 0; round < 10000; ++round) {
    const int i = static_cast<int>(rng.uniform_int(5));
    const double v = rng.uniform(0.0, 3.0);
    sum.set(i, v);
    min.set(i, v);
  }
  double leaves = 0.0, smallest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 5; ++i) {
    leaves += sum.get(i);
    smallest = std::min(smallest, min.get(i));
  }
  CHECK(sum.total() == Approx(leaves).epsilon(1e-12));
  CHECK(min.min() == smallest);

  sum.set(4, 0.0);
  sum.set(3, 0.0);
  CHECK(sum.find_prefix_sum(sum.total() * 2) <= 2);  // never a zero leaf
  CHECK(sum.get(sum.find_prefix_sum(sum.total())) > 0.0);
  CHECK_THROWS_AS(sum.set(5, 1.0), std::out_of_range);
  rlx::SumTree zero(3);
  CHECK_THROWS_AS(zero.find_prefix_sum(0.0), std::logic_error);
}

TEST_CASE("Prioritized replay: new transitions get the max priority, and tree after updates and wrap-around",
          "[learner][dqn][replay]") {
  const double alpha = 0.5, eps = 0.01;
  rlx::PrioritizedReplayBuffer buffer(4, 1, {}, {alpha, eps});
  add_numbered(buffer, 3);
  CHECK(buffer.max_priority() == 1.0);
  for (int i = 0; i < 3; ++i) CHECK(buffer.priority(i) == 1.0);
  CHECK(buffer.total_priority() == 3.0);

  const std::vector<int64_t> slots = {0, 2};
  const std::vector<float> td = {-3.0f, 0.25f};
  buffer.update_priorities(slots.data(), td.data(), 2);
  const double p0 = std::pow(3.0 + eps, alpha), p2 = std::pow(0.25 + eps, alpha);
  CHECK(buffer.priority(0) == Approx(p0));
  CHECK(buffer.priority(2) == Approx(p2));
  CHECK(buffer.max_priority() == Approx(3.0 + eps));
  CHECK(buffer.total_priority() == Approx(p0 + 1.0 + p2));
  CHECK(buffer.min_priority() == Approx(p2));

  // Slot 3 and then (wrapping) slot 0 get the max priority (3.01)^alpha.
  add_numbered(buffer, 2, 3);
  CHECK(buffer.size() == 4);
  CHECK(buffer.obs(0)[0] == 4.0f);
  CHECK(buffer.priority(3) == Approx(p0));
  CHECK(buffer.priority(0) == Approx(p0));
  CHECK(buffer.total_priority() == Approx(p0 + 1.0 + p2 + p0));

  const std::vector<int64_t> bad = {4};
  CHECK_THROWS_AS(buffer.update_priorities(bad.data(), td.data(), 1), std::out_of_range);
  const std::vector<float> nan = {std::nanf("")};
  CHECK_THROWS_AS(buffer.update_priorities(slots.data(), nan.data(), 1), std::invalid_argument);
  CHECK_THROWS_AS(rlx::PrioritizedReplayBuffer(4, 1, {}, {-1.0, eps}), std::invalid_argument);
  CHECK_THROWS_AS(rlx::PrioritizedReplayBuffer(4, 1, {}, {0.6, 0.0}), std::invalid_argument);
}

TEST_CASE("Prioritized replay: sampling frequencies follow the priorities", "[learner][dqn][replay]") {
  const double alpha = 0.7;
  rlx::PrioritizedReplayBuffer buffer(6, 1, {}, {alpha, 1e-6});
  add_numbered(buffer, 6);
  const std::vector<int64_t> slots = {0, 1, 2, 3, 4, 5};
  const std::vector<float> td = {0.1f, 0.5f, 1.0f, 2.0f, 4.0f, 0.05f};
  buffer.update_priorities(slots.data(), td.data(), 6);
  double total = 0.0;
  std::vector<double> p(6);
  for (size_t i = 0; i < 6; ++i) total += p[i] = std::pow(td[i] + 1e-6, alpha);

  rlx::Rng rng(12345);
  rlx::ReplaySample sample;
  std::vector<int> counts(6, 0);
  const int rounds = 5000, batch = 32;
  for (int r = 0; r < rounds; ++r) {
    buffer.sample(batch, 0.4, rng, sample);
    for (int64_t slot : sample.indices) ++counts[static_cast<size_t>(slot)];
    for (int i = 0; i < batch; ++i) CHECK(sample.obs[static_cast<size_t>(i)] == static_cast<float>(sample.indices[static_cast<size_t>(i)]));
  }
  // Stratified draws vary less than independent ones, so the chi-square bound (5 degrees of
  // freedom, 0.1% tail 20.5) is conservative.
  const double draws = rounds * batch;
  double chi2 = 0.0;
  for (size_t i = 0; i < 6; ++i) {
    const double expected = draws * p[i] / total;
    chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
    CHECK(counts[i] / draws == Approx(p[i] / total).margin(0.01));
  }
  CHECK(chi2 < 20.5);
}

TEST_CASE("Prioritized replay: importance weights on a tiny buffer", "[learner][dqn][replay]") {
  // alpha = 1, priorities 1, 2, 3, 4 (td = p - eps): P = p / 10, N = 4.
  const double eps = 1e-6;
  rlx::PrioritizedReplayBuffer buffer(4, 1, {}, {1.0, eps});
  add_numbered(buffer, 4);
  const std::vector<int64_t> slots = {0, 1, 2, 3};
  const std::vector<float> td = {1.0f, 2.0f, 3.0f, 4.0f};
  buffer.update_priorities(slots.data(), td.data(), 4);
  // Four equal segments of the total 10: [0, 2.5) [2.5, 5) [5, 7.5) [7.5, 10).
  rlx::Rng rng(1);
  rlx::ReplaySample sample;
  for (double beta : {0.0, 0.5, 1.0}) {
    for (int round = 0; round < 50; ++round) {
      buffer.sample(4, beta, rng, sample);
      for (size_t i = 0; i < 4; ++i) {
        const double p = static_cast<double>(sample.indices[i]) + 1.0 + eps;
        // w_i = (N P(i))^-beta / max_j (N P(j))^-beta = (p_i / p_min)^-beta
        const double by_hand = std::pow(4 * p / 10.0, -beta) / std::pow(4 * (1.0 + eps) / 10.0, -beta);
        CHECK(sample.weights[i] == Approx(by_hand).epsilon(1e-5));
      }
      // Stratified: the first segment only reaches slots 0 and 1, the last only slot 3.
      CHECK(sample.indices[0] <= 1);
      CHECK(sample.indices[3] == 3);
    }
  }
  CHECK(rlx::annealed_beta(0.4, 0, 1000) == Approx(0.4));
  CHECK(rlx::annealed_beta(0.4, 500, 1000) == Approx(0.7));
  CHECK(rlx::annealed_beta(0.4, 5000, 1000) == Approx(1.0));
  CHECK(rlx::annealed_beta(0.4, 10, 0) == 1.0);
}
