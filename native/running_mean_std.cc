#include "native/running_mean_std.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {

namespace {

std::vector<double> json_doubles(const nlohmann::json& state, const char* key) {
  if (!state.is_object() || !state.contains(key) || !state.at(key).is_array()) {
    throw std::invalid_argument(std::string("normaliser state lacks the array \"") + key + "\"");
  }
  return state.at(key).get<std::vector<double>>();
}

double json_number(const nlohmann::json& state, const char* key) {
  if (!state.is_object() || !state.contains(key) || !state.at(key).is_number()) {
    throw std::invalid_argument(std::string("normaliser state lacks the number \"") + key + "\"");
  }
  return state.at(key).get<double>();
}

}  // namespace

// ---- RunningMeanStd ----

RunningMeanStd::RunningMeanStd(int64_t size) {
  if (size < 1) throw std::invalid_argument("RunningMeanStd needs size >= 1, got " + std::to_string(size));
  mean_.assign(static_cast<size_t>(size), 0.0);
  var_.assign(static_cast<size_t>(size), 1.0);
}

void RunningMeanStd::update(const float* data, int64_t rows) { update_rows(data, rows); }
void RunningMeanStd::update(const double* data, int64_t rows) { update_rows(data, rows); }

template <typename T>
void RunningMeanStd::update_rows(const T* data, int64_t rows) {
  if (rows < 0) throw std::invalid_argument("RunningMeanStd::update got a negative row count");
  if (rows == 0) return;
  if (data == nullptr) throw std::invalid_argument("RunningMeanStd::update got a null buffer");
  const auto n = static_cast<size_t>(size());
  batch_mean_.assign(n, 0.0);
  batch_var_.assign(n, 0.0);
  // Two passes (mean, then squared deviations) in double: exact enough for any batch size.
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = data + r * static_cast<int64_t>(n);
    for (size_t i = 0; i < n; ++i) batch_mean_[i] += static_cast<double>(row[i]);
  }
  for (size_t i = 0; i < n; ++i) batch_mean_[i] /= static_cast<double>(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = data + r * static_cast<int64_t>(n);
    for (size_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(row[i]) - batch_mean_[i];
      batch_var_[i] += d * d;
    }
  }
  for (size_t i = 0; i < n; ++i) batch_var_[i] /= static_cast<double>(rows);
  update_from_moments(batch_mean_, batch_var_, static_cast<double>(rows));
}

void RunningMeanStd::update_from_moments(const std::vector<double>& batch_mean, const std::vector<double>& batch_var,
                                         double batch_count) {
  if (batch_mean.size() != mean_.size() || batch_var.size() != mean_.size()) {
    throw std::invalid_argument("RunningMeanStd holds " + std::to_string(mean_.size()) + " elements, the batch " +
                                std::to_string(batch_mean.size()) + "/" + std::to_string(batch_var.size()));
  }
  if (!(batch_count >= 0.0)) throw std::invalid_argument("RunningMeanStd batch count must be >= 0");
  if (batch_count == 0.0) return;
  // Chan et al.'s parallel combination of (mean, M2, count).
  const double total = count_ + batch_count;
  for (size_t i = 0; i < mean_.size(); ++i) {
    const double delta = batch_mean[i] - mean_[i];
    const double m2 = var_[i] * count_ + batch_var[i] * batch_count + delta * delta * count_ * batch_count / total;
    mean_[i] += delta * batch_count / total;
    var_[i] = m2 / total;
  }
  count_ = total;
}

nlohmann::json RunningMeanStd::to_json() const { return {{"mean", mean_}, {"var", var_}, {"count", count_}}; }

void RunningMeanStd::load_json(const nlohmann::json& state) {
  std::vector<double> mean = json_doubles(state, "mean");
  std::vector<double> var = json_doubles(state, "var");
  const double count = json_number(state, "count");
  if (mean.size() != mean_.size() || var.size() != mean_.size()) {
    throw std::invalid_argument("normaliser state holds " + std::to_string(mean.size()) + " means and " +
                                std::to_string(var.size()) + " variances, expected " + std::to_string(mean_.size()));
  }
  if (!(count > 0.0)) throw std::invalid_argument("normaliser state count must be positive");
  for (double v : var) {
    if (!(v >= 0.0)) throw std::invalid_argument("normaliser state has a negative or NaN variance");
  }
  mean_ = std::move(mean);
  var_ = std::move(var);
  count_ = count;
}

// ---- RewardScaler ----

RewardScaler::RewardScaler(double gamma) : gamma_(0.0) { set_gamma(gamma); }

void RewardScaler::set_gamma(double gamma) {
  if (!(gamma >= 0.0 && gamma <= 1.0)) throw std::invalid_argument("RewardScaler gamma must lie in [0, 1]");
  gamma_ = gamma;
}

void RewardScaler::scale(const SampleBatch& batch, std::vector<float>& out) {
  out.resize(batch.rewards.size());
  scale(batch, out.data());
}

void RewardScaler::scale(const SampleBatch& batch, float* out) {
  const auto k = static_cast<size_t>(batch.num_envs);
  const auto t_max = static_cast<size_t>(batch.num_steps);
  if (batch.rewards.size() != t_max * k || batch.terminated.size() != t_max * k || batch.truncated.size() != t_max * k) {
    throw std::invalid_argument("RewardScaler::scale got a batch whose columns disagree with T * K");
  }
  std::vector<double>& returns = returns_[batch.worker_id];
  if (returns.size() != k) returns.assign(k, 0.0);  // a new worker, or one that came back with another K
  for (size_t t = 0; t < t_max; ++t) {
    const size_t row = t * k;
    for (size_t i = 0; i < k; ++i) returns[i] = returns[i] * gamma_ + static_cast<double>(batch.rewards[row + i]);
    return_stats_.update(returns.data(), static_cast<int64_t>(k));
    scale_without_update(batch.rewards.data() + row, static_cast<int64_t>(k), out + row);
    for (size_t i = 0; i < k; ++i) {
      if (batch.terminated[row + i] || batch.truncated[row + i]) returns[i] = 0.0;
    }
  }
}

void RewardScaler::scale_without_update(const float* rewards, int64_t n, float* out) const {
  const double inv_std = 1.0 / std::sqrt(return_stats_.var()[0] + kEpsilon);
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>(std::clamp(static_cast<double>(rewards[i]) * inv_std, -kClip, kClip));
  }
}

double RewardScaler::running_return(uint64_t worker_id, int32_t env) const {
  const auto it = returns_.find(worker_id);
  if (it == returns_.end() || env < 0 || static_cast<size_t>(env) >= it->second.size()) return 0.0;
  return it->second[static_cast<size_t>(env)];
}

nlohmann::json RewardScaler::to_json() const {
  nlohmann::json returns = nlohmann::json::array();
  for (const auto& [worker_id, values] : returns_) returns.push_back({{"worker_id", worker_id}, {"returns", values}});
  return {{"gamma", gamma_}, {"return_stats", return_stats_.to_json()}, {"returns", returns}};
}

void RewardScaler::load_json(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("return_stats") || !state.contains("returns") || !state.at("returns").is_array()) {
    throw std::invalid_argument("reward scaler state needs \"return_stats\" and a \"returns\" array");
  }
  RunningMeanStd stats(1);
  stats.load_json(state.at("return_stats"));
  std::map<uint64_t, std::vector<double>> returns;
  for (const auto& entry : state.at("returns")) {
    if (!entry.is_object() || !entry.contains("worker_id") || !entry.at("worker_id").is_number_unsigned()) {
      throw std::invalid_argument("reward scaler state has a \"returns\" entry without an unsigned worker_id");
    }
    returns[entry.at("worker_id").get<uint64_t>()] = json_doubles(entry, "returns");
  }
  const double gamma = json_number(state, "gamma");
  set_gamma(gamma);
  return_stats_ = std::move(stats);
  returns_ = std::move(returns);
}

}  // namespace rlx
