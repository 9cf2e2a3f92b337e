#include "algorithms/native_ppo_algorithm.h"

#include <sstream>
#include <stdexcept>

#include "algorithms/ppo_results.h"
#include "algorithms/native_algorithms.h"
#include "core/config_error.h"
#include "core/non_finite_error.h"
#include "core/stop_signal.h"
#include "envs/experiment_envs.h"
#include "envs/registry.h"
#include "native/ppo_state_file.h"

namespace rlx {

NativePpoAlgorithm::NativePpoAlgorithm(const Experiment& experiment)
    : setup_(common_worker_setup(experiment)),
      spec_(experiment_env_spec(experiment)),
      train_batch_size_(effective_train_batch_size(experiment.config)) {
  if (auto refusal = native_learner_refusal(experiment)) {
    throw ConfigError(experiment.source + ": learner_backend: native: " + *refusal);
  }
  PpoConfig config = experiment.config.ppo();
  config.total_timesteps = experiment.stop.schedule_horizon();
  setup_.behaviour_values = !config.recompute_values;  // the learner computes V(s) itself
  if (auto reason = NativePpoLearner::unsupported(setup_.model, config)) {
    throw ConfigError(experiment.source + ": learner_backend: native cannot train this: " + *reason +
                      " (use learner_backend: torch)");
  }
  learner_ = std::make_unique<NativePpoLearner>(setup_.model, config, setup_.seed);
}

IterationResult NativePpoAlgorithm::train_iteration(Sampler& sampler, int64_t timesteps_done) {
  const std::vector<SampleBatch> batches = sampler.collect(train_batch_size_);
  mid_update_ = true;
  PpoUpdateMetrics m;
  try {
    m = learner_->update(batches, timesteps_done);
  } catch (const NonFiniteLearnerError&) {
    mid_update_ = false;  // the learner undid the update
    throw;
  } catch (const StopRequested&) {
    mid_update_ = false;  // abandoned for an overdue stop: the learner undid the update
    throw;
  }
  mid_update_ = false;
  sampler.publish(learner_->weights(++version_));
  IterationResult result;
  for (const SampleBatch& batch : batches) result.env_steps += batch.num_transitions();
  result.learner = ppo_learner_columns(m, version_);
  return result;
}

std::vector<CheckpointFile> NativePpoAlgorithm::checkpoint_files() const {
  std::ostringstream file;
  learner_->save(file);
  return {{kPpoLearnerFile, file.str()}};
}

nlohmann::json NativePpoAlgorithm::checkpoint_state() const {
  return {{"learner", learner_->state_json()}, {"policy_version", version_}};
}

void NativePpoAlgorithm::restore(const Checkpoint& checkpoint) {
  restore_learner_state(checkpoint, kPpoLearnerFile, "the native PPO learner",
                        [this](std::istream& file, const nlohmann::json& state) {
                          learner_->load(file);
                          learner_->load_state_json(state.at("learner"));
                          version_ = state.at("policy_version").get<uint64_t>();
                        });
}

std::unique_ptr<RolloutPolicy> NativePpoAlgorithm::evaluation_policy(bool deterministic, uint64_t seed) const {
  return weighted_evaluation_policy(setup_, spec_, *current_weights(), deterministic, seed);
}

void NativePpoAlgorithm::follow(const LearnerCommand& command) {
  (void)command;
  throw std::logic_error("the native PPO learner has no data-parallel ranks to command");
}

}  // namespace rlx
