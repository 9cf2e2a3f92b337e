// Helpers for the data-parallel learner tests: ranks as threads, each with its own Gloo process
// group over one c10d HashStore, and a closeness check of two ranks' parameters.
#pragma once

#include "tests/learner/torch_catch.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include "learner/gloo_communicator.h"
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

}  // namespace rlx_test
