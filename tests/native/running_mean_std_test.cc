#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "core/sample_batch.h"
#include "native/running_mean_std.h"

namespace {

std::vector<float> random_rows(int64_t rows, int64_t size, uint64_t seed) {
  rlx::Rng rng(seed);
  std::vector<float> data(static_cast<size_t>(rows * size));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(3.0 * rng.normal() + 0.5 * static_cast<double>(i % size) - 1.0);
  return data;
}

}  // namespace

TEST_CASE("RunningMeanStd: chunked merges equal the whole-batch statistics", "[native][ppo]") {
  const int64_t size = 3, rows = 1000;
  const std::vector<float> data = random_rows(rows, size, 7);

  rlx::RunningMeanStd whole(size);
  whole.update(data.data(), rows);
  rlx::RunningMeanStd chunked(size);
  const std::vector<int64_t> cuts = {0, 1, 250, 251, 700, rows};  // uneven chunks, one of a single row
  for (size_t c = 0; c + 1 < cuts.size(); ++c) chunked.update(data.data() + cuts[c] * size, cuts[c + 1] - cuts[c]);
  REQUIRE(chunked.count() == Approx(whole.count()).epsilon(1e-15));
  REQUIRE(whole.count() == Approx(rows + rlx::RunningMeanStd::kInitialCount));

  // Direct two-pass statistics of the data (the 1e-4 prior count barely moves them).
  for (int64_t i = 0; i < size; ++i) {
    double mean = 0.0, var = 0.0;
    for (int64_t r = 0; r < rows; ++r) mean += data[r * size + i];
    mean /= rows;
    for (int64_t r = 0; r < rows; ++r) var += (data[r * size + i] - mean) * (data[r * size + i] - mean);
    var /= rows;
    CHECK(whole.mean()[i] == Approx(mean).epsilon(1e-6));
    CHECK(whole.var()[i] == Approx(var).epsilon(1e-6));
    CHECK(chunked.mean()[i] == Approx(whole.mean()[i]).epsilon(1e-12));
    CHECK(chunked.var()[i] == Approx(whole.var()[i]).epsilon(1e-12));
  }
}

TEST_CASE("RunningMeanStd: moments merge, prior, JSON round trip and misuse", "[native][ppo]") {
  rlx::RunningMeanStd stats(2);
  CHECK(stats.mean() == std::vector<double>{0.0, 0.0});
  CHECK(stats.var() == std::vector<double>{1.0, 1.0});

  // Prior (0, 1, c0) merged with (mean 2, var 4, count 3) by hand.
  stats.update_from_moments({2.0, -1.0}, {4.0, 0.0}, 3.0);
  const double c0 = rlx::RunningMeanStd::kInitialCount, total = c0 + 3.0;
  CHECK(stats.count() == Approx(total));
  CHECK(stats.mean()[0] == Approx(2.0 * 3.0 / total));
  CHECK(stats.var()[0] == Approx((1.0 * c0 + 4.0 * 3.0 + 4.0 * c0 * 3.0 / total) / total));
  CHECK(stats.var()[1] == Approx((1.0 * c0 + 0.0 + 1.0 * c0 * 3.0 / total) / total));

  rlx::RunningMeanStd restored(2);
  restored.load_json(nlohmann::json::parse(stats.to_json().dump()));
  CHECK(restored.mean() == stats.mean());  // bit-identical through text
  CHECK(restored.var() == stats.var());
  CHECK(restored.count() == stats.count());

  CHECK_THROWS_AS(rlx::RunningMeanStd(0), std::invalid_argument);
  CHECK_THROWS_AS(stats.update_from_moments({1.0}, {1.0}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(rlx::RunningMeanStd(3).load_json(stats.to_json()), std::invalid_argument);
  CHECK_THROWS_AS(restored.load_json(nlohmann::json{{"mean", {0, 0}}}), std::invalid_argument);
  const std::vector<float> none;
  stats.update(none.data(), 0);  // no rows: nothing changes
  CHECK(stats.count() == Approx(total));
}

TEST_CASE("RewardScaler: per-env discounted returns, reset at episode end, keyed by worker", "[native][ppo]") {
  const double gamma = 0.5;
  rlx::SampleBatch batch;
  batch.resize(3, 2, 1, 0, true);
  batch.worker_id = 4;
  batch.rewards = {1.0f, 2.0f, 1.0f, 2.0f, 1.0f, 2.0f};  // [T=3, K=2]
  batch.terminated = {0, 0, 1, 0, 0, 0};                 // env 0 ends at t = 1
  batch.truncated = {0, 0, 0, 0, 0, 1};                  // env 1 ends at t = 2

  rlx::RewardScaler scaler(gamma);
  std::vector<float> scaled;
  scaler.scale(batch, scaled);

  // Independent replay: G per env, statistics fed with each step's two returns, then the step scaled.
  rlx::RunningMeanStd expected_stats(1);
  double g[2] = {0.0, 0.0};
  for (int t = 0; t < 3; ++t) {
    double row[2];
    for (int k = 0; k < 2; ++k) row[k] = g[k] = g[k] * gamma + batch.rewards[t * 2 + k];
    expected_stats.update(row, 2);
    const double inv = 1.0 / std::sqrt(expected_stats.var()[0] + rlx::RewardScaler::kEpsilon);
    for (int k = 0; k < 2; ++k) {
      CHECK(scaled[t * 2 + k] == Approx(batch.rewards[t * 2 + k] * inv).epsilon(1e-6));
      if (batch.terminated[t * 2 + k] || batch.truncated[t * 2 + k]) g[k] = 0.0;
    }
  }
  CHECK(scaler.return_stats().var()[0] == Approx(expected_stats.var()[0]));
  CHECK(scaler.running_return(4, 0) == Approx(1.0));  // reset after t = 1, then r = 1 at t = 2
  CHECK(scaler.running_return(4, 1) == 0.0);          // reset after the truncation at t = 2
  CHECK(scaler.running_return(5, 0) == 0.0);          // another worker starts fresh

  // A fragment from worker 5 leaves worker 4's returns alone.
  batch.worker_id = 5;
  batch.terminated.assign(6, 0);
  batch.truncated.assign(6, 0);
  scaler.scale(batch, scaled);
  CHECK(scaler.running_return(4, 0) == Approx(1.0));
  CHECK(scaler.running_return(5, 1) == Approx(2.0 * (1 + gamma + gamma * gamma)));

  // JSON round trip restores the returns and the statistics exactly.
  rlx::RewardScaler restored(0.9);
  restored.load_json(nlohmann::json::parse(scaler.to_json().dump()));
  CHECK(restored.gamma() == gamma);
  CHECK(restored.running_return(5, 1) == scaler.running_return(5, 1));
  CHECK(restored.return_stats().var() == scaler.return_stats().var());

  // Clipped to [-10, 10] when the return spread is tiny.
  rlx::RewardScaler fresh(0.0);
  rlx::SampleBatch constant;
  constant.resize(1, 2, 1, 0, true);
  constant.rewards = {0.001f, 0.001f};
  std::vector<float> few;
  for (int i = 0; i < 100; ++i) fresh.scale(constant, few);
  constant.rewards = {1000.0f, -1000.0f};
  fresh.scale_without_update(constant.rewards.data(), 2, few.data());
  CHECK(few[0] == 10.0f);
  CHECK(few[1] == -10.0f);
  CHECK_THROWS_AS(rlx::RewardScaler(1.5), std::invalid_argument);
}
