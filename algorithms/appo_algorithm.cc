#include "algorithms/appo_algorithm.h"

#include <algorithm>
#include <array>

#include "core/config.h"

namespace rlx {

namespace {

// Upper bounds (inclusive) of the lag histogram's buckets; the last bucket is open.
constexpr std::array<uint64_t, 7> kLagBucketEnds = {0, 1, 3, 7, 15, 31, 63};

std::string bucket_name(size_t bucket) {
  if (bucket == kLagBucketEnds.size()) return std::to_string(kLagBucketEnds.back() + 1) + "+";
  const uint64_t high = kLagBucketEnds[bucket];
  const uint64_t low = bucket == 0 ? 0 : kLagBucketEnds[bucket - 1] + 1;
  return low == high ? std::to_string(low) : std::to_string(low) + "-" + std::to_string(high);
}

}  // namespace

PpoConfig appo_learner_config(const PpoConfig& ppo, const AppoConfig& appo) {
  PpoConfig config = ppo;
  config.vtrace = appo.vtrace;
  // vtrace: false is APPO without any correction for the lag: the ratio is the learner's too.
  config.behaviour_ratio = appo.vtrace && appo.surrogate_ratio == "behaviour";
  config.rho_bar = appo.rho_bar;
  config.c_bar = appo.c_bar;
  config.kl_coeff = appo.use_kl_loss ? appo.kl_coeff : 0.0;
  config.target_update_frequency = appo.target_update_frequency;
  return config;
}

nlohmann::json policy_lag_json(const std::vector<uint64_t>& lags) {
  std::array<uint64_t, kLagBucketEnds.size() + 1> counts{};
  double sum = 0.0;
  uint64_t most = 0;
  for (uint64_t lag : lags) {
    const auto bucket = static_cast<size_t>(std::lower_bound(kLagBucketEnds.begin(), kLagBucketEnds.end(), lag) -
                                            kLagBucketEnds.begin());
    ++counts[bucket];
    sum += static_cast<double>(lag);
    most = std::max(most, lag);
  }
  nlohmann::json histogram = nlohmann::json::array();  // in lag order (a JSON object would sort "16-31" before "2-3")
  for (size_t b = 0; b < counts.size(); ++b) histogram.push_back({{"lag", bucket_name(b)}, {"fragments", counts[b]}});
  return {{"mean", lags.empty() ? 0.0 : sum / static_cast<double>(lags.size())},
          {"max", most},
          {"histogram", histogram}};
}

AppoAlgorithm::AppoAlgorithm(const Experiment& experiment, const DataParallelOptions& options)
    : PpoAlgorithm(experiment, options, appo_learner_config(experiment.config.ppo(), experiment.config.appo())),
      appo_(experiment.config.appo()) {}

int AppoAlgorithm::worker_credits(int64_t num_workers) const {
  // Each worker's share of the queue, in fragments, plus the one it is sampling.
  const int64_t fragment = int64_t{setup_.num_envs} * setup_.fragment_length;
  const int64_t fragments = (appo_.learner_queue_size * train_batch_size_ + fragment - 1) / fragment;
  const int64_t share = (fragments + std::max<int64_t>(num_workers, 1) - 1) / std::max<int64_t>(num_workers, 1);
  return static_cast<int>(std::clamp<int64_t>(share + 1, kDefaultWorkerCredits, 1024));
}

IterationResult AppoAlgorithm::train_iteration(Sampler& sampler, int64_t timesteps_done) {
  const std::vector<SampleBatch> batches = sampler.collect(train_batch_size_);
  std::vector<uint64_t> lags;
  lags.reserve(batches.size());
  for (const SampleBatch& batch : batches) lags.push_back(version_ > batch.policy_version ? version_ - batch.policy_version : 0);
  double scatter_s = 0.0;
  const PpoUpdateMetrics m = update_learner(batches, timesteps_done, scatter_s);
  ++version_;
  if (version_ - last_published_ >= static_cast<uint64_t>(appo_.broadcast_interval)) {
    sampler.publish(learner_->weights(version_));
    last_published_ = version_;
  }
  IterationResult result;
  for (const SampleBatch& batch : batches) result.env_steps += batch.num_transitions();
  result.learner = learner_columns(m, scatter_s);
  result.learner["policy_lag"] = policy_lag_json(lags);
  if (appo_.use_kl_loss) result.learner["kl_to_target"] = m.kl_to_target;
  return result;
}

void AppoAlgorithm::restore(const Checkpoint& checkpoint) {
  PpoAlgorithm::restore(checkpoint);
  last_published_ = version_;  // the trainer publishes the restored weights first
}

}  // namespace rlx
