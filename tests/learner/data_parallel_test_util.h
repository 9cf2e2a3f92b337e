// Helpers for the data-parallel learner tests: ranks as threads, each with its own Gloo process
// group over one c10d HashStore, and a closeness check of two ranks' parameters.
#pragma once

#include "tests/learner/torch_catch.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "learner/data_parallel.h"
#include "learner/gloo_communicator.h"
#include "learner/ppo_learner.h"
#include "learner/rank_threads.h"

namespace rlx_test {

inline constexpr std::chrono::milliseconds kRankTimeout{30000};

// Runs body(rank, comm) on `world` threads with one Gloo group; rethrows the first failure.
inline void run_ranks(int world, const std::function<void(int, rlx::Communicator&)>& body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  rlx::run_rank_threads(world, [&](int rank) {
    rlx::GlooCommunicator comm(store, rank, world, kRankTimeout);
    body(rank, comm);
  });
}

// max |a - b| relative to max |b|, and the same for the vectors' norms.
inline void check_close(const std::vector<float>& a, const std::vector<float>& b, double tolerance) {
  REQUIRE(a.size() == b.size());
  double max_diff = 0.0, max_ref = 0.0, diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - b[i]);
    max_diff = std::max(max_diff, d);
    max_ref = std::max(max_ref, std::abs(static_cast<double>(b[i])));
    diff2 += d * d;
    ref2 += static_cast<double>(b[i]) * b[i];
  }
  INFO("max |diff| " << max_diff << ", max |param| " << max_ref);
  CHECK(max_diff <= tolerance * max_ref);
  CHECK(std::sqrt(diff2) <= tolerance * std::sqrt(ref2));
}

// Two ranks' learners after one data-parallel update: rank 0 seeded `seed` (the single
// learner's), rank 1 otherwise (rank 0 broadcasts its state); rank 0, the driver, scales the
// whole batch's rewards once, then each rank updates on take(rank, scaled, shard)'s fragments.
struct TwoRankUpdate {
  std::vector<std::unique_ptr<rlx::PpoLearner>> learners;
  std::vector<rlx::PpoUpdateMetrics> metrics;
};
inline TwoRankUpdate update_two_ranks(
    const rlx::ModelSpec& model, const rlx::PpoConfig& config, uint64_t seed, const std::vector<rlx::SampleBatch>& batches,
    const std::function<std::vector<rlx::SampleBatch>(int, const std::vector<rlx::SampleBatch>&, rlx::PpoShard&)>& take) {
  TwoRankUpdate out;
  out.learners.push_back(std::make_unique<rlx::PpoLearner>(model, config, seed));
  out.learners.push_back(std::make_unique<rlx::PpoLearner>(model, config, seed + 88));
  out.metrics.resize(2);
  std::vector<rlx::SampleBatch> scaled = batches;
  out.learners[0]->scale_rewards(scaled);
  run_ranks(2, [&](int rank, rlx::Communicator& comm) {
    rlx::PpoLearner& learner = *out.learners[static_cast<size_t>(rank)];
    learner.set_data_parallel_hooks(rlx::make_ppo_hooks(comm, comm));
    rlx::broadcast_learner_state(comm, learner);
    rlx::PpoShard shard;
    const std::vector<rlx::SampleBatch> mine = take(rank, scaled, shard);
    out.metrics[static_cast<size_t>(rank)] = learner.update(mine, 1000, &shard);
  });
  return out;
}

// Both ranks end with the single learner's parameters and report its metrics on the whole batch
// of num_samples samples.
inline void check_ranks_like_single(const TwoRankUpdate& ranks, rlx::PpoLearner& single,
                                    const rlx::PpoUpdateMetrics& reference, int64_t num_samples) {
  const std::vector<float> expected = single.model().flat_parameters();
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    check_close(ranks.learners[static_cast<size_t>(rank)]->model().flat_parameters(), expected, 1e-5);
    const rlx::PpoUpdateMetrics& m = ranks.metrics[static_cast<size_t>(rank)];
    CHECK(m.num_samples == num_samples);
    CHECK(m.num_minibatch_steps == reference.num_minibatch_steps);
    CHECK(m.policy_loss == Approx(reference.policy_loss).epsilon(1e-4).margin(1e-6));
    CHECK(m.vf_loss == Approx(reference.vf_loss).epsilon(1e-4));
    CHECK(m.entropy == Approx(reference.entropy).epsilon(1e-4));
    CHECK(m.grad_norm == Approx(reference.grad_norm).epsilon(1e-4));
    CHECK(m.explained_variance == Approx(reference.explained_variance).epsilon(1e-4));
  }
}

// Two ranks' PpoLearners (seed 5) after one data-parallel update in which rank 1 holds the last
// of `batches` (fragments of fragment_samples samples each, rewards scaled once for all) and
// rank 0 the others.
inline std::vector<std::unique_ptr<rlx::PpoLearner>> update_with_last_fragment_apart(
    const rlx::ModelSpec& model, const rlx::PpoConfig& config, const std::vector<rlx::SampleBatch>& batches,
    int64_t fragment_samples) {
  std::vector<std::unique_ptr<rlx::PpoLearner>> learners;
  for (int r = 0; r < 2; ++r) learners.push_back(std::make_unique<rlx::PpoLearner>(model, config, 5));
  std::vector<rlx::SampleBatch> scaled = batches;
  learners[0]->scale_rewards(scaled);
  const auto count = static_cast<int64_t>(batches.size());
  run_ranks(2, [&](int rank, rlx::Communicator& comm) {
    rlx::PpoLearner& learner = *learners[static_cast<size_t>(rank)];
    learner.set_data_parallel_hooks(rlx::make_ppo_hooks(comm, comm));
    rlx::PpoShard shard;
    shard.global_samples = fragment_samples * count;
    shard.rewards_prescaled = true;
    std::vector<rlx::SampleBatch> mine;
    for (int64_t f = 0; f < count; ++f) {
      if ((f == count - 1) != (rank == 1)) continue;
      mine.push_back(scaled[static_cast<size_t>(f)]);
      shard.fragment_offsets.push_back(fragment_samples * f);
    }
    learner.update(mine, 0, &shard);
  });
  return learners;
}

}  // namespace rlx_test
