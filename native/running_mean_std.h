// Running statistics for normalisation (torch-free): RunningMeanStd merges batch moments with
// the parallel Welford/Chan update; RewardScaler divides rewards by the running std of the
// discounted return (Stable-Baselines3 VecNormalize / CleanRL style).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sample_batch.h"

namespace rlx {

// Per-element running mean and (population) variance of a stream of [rows, size] samples.
// Starts at mean 0, var 1 with a tiny pseudo-count (1e-4, as SB3 and CleanRL), so the first
// batch effectively replaces the prior.
class RunningMeanStd {
 public:
  static constexpr double kInitialCount = 1e-4;

  // Statistics of vectors with `size` elements; throws std::invalid_argument if size < 1.
  explicit RunningMeanStd(int64_t size = 1);

  // Merges rows [rows, size] of samples (row-major); rows == 0 changes nothing.
  void update(const float* data, int64_t rows);
  // Same for double samples.
  void update(const double* data, int64_t rows);
  // Merges a batch given by its moments (population variance); throws on a size mismatch or count < 0.
  void update_from_moments(const std::vector<double>& batch_mean, const std::vector<double>& batch_var, double batch_count);

  int64_t size() const { return static_cast<int64_t>(mean_.size()); }
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& var() const { return var_; }
  double count() const { return count_; }

  // {"mean": [...], "var": [...], "count": c}.
  nlohmann::json to_json() const;
  // Restores from to_json()'s form; throws std::invalid_argument on missing keys or a size mismatch.
  void load_json(const nlohmann::json& state);

 private:
  template <typename T>
  void update_rows(const T* data, int64_t rows);

  std::vector<double> mean_;
  std::vector<double> var_;
  double count_ = kInitialCount;
  std::vector<double> batch_mean_, batch_var_;  // scratch, reused
};

// Scales rewards by 1 / sqrt(var(G) + eps), clipped to [-clip, clip], where G is each env's
// running discounted return G = G * gamma + r, reset to 0 after a step that ended its episode
// (terminated or truncated). Envs are keyed by (worker_id, env index) because fragments arrive
// from many workers; each step's K returns update the statistics before that step is scaled.
class RewardScaler {
 public:
  static constexpr double kEpsilon = 1e-8;
  static constexpr double kClip = 10.0;

  // Throws std::invalid_argument unless 0 <= gamma <= 1.
  explicit RewardScaler(double gamma);

  // Scales batch.rewards [T, K] into out (resized to T * K), updating the returns and the statistics.
  void scale(const SampleBatch& batch, std::vector<float>& out);
  // Same into out[T * K].
  void scale(const SampleBatch& batch, float* out);
  // Scales rewards [n] with the current statistics, updating nothing.
  void scale_without_update(const float* rewards, int64_t n, float* out) const;

  double gamma() const { return gamma_; }
  void set_gamma(double gamma);
  const RunningMeanStd& return_stats() const { return return_stats_; }
  // Running return of env (worker_id, env) (0 when never seen).
  double running_return(uint64_t worker_id, int32_t env) const;

  // {"gamma", "return_stats", "returns": [{"worker_id", "returns": [...]}, ...]}.
  nlohmann::json to_json() const;
  // Restores from to_json()'s form; throws std::invalid_argument on a malformed state.
  void load_json(const nlohmann::json& state);

 private:
  double gamma_;
  RunningMeanStd return_stats_{1};
  std::map<uint64_t, std::vector<double>> returns_;  // worker_id -> G per env index
};

}  // namespace rlx
