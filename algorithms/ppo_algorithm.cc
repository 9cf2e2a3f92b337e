#include "algorithms/ppo_algorithm.h"

#include <sstream>

#include "envs/registry.h"
#include "rollout/policy_factory.h"

namespace rlx {

PpoConfig ppo_config_from(const Experiment& experiment) {
  const Config& c = experiment.config;
  PpoConfig config;
  config.lr = c.get_double("lr");
  config.anneal_lr = c.get_string("lr_schedule") == "linear";
  config.gamma = c.get_double("gamma");
  config.gae_lambda = c.get_double("lambda");
  config.clip_param = c.get_double("clip_param");
  config.anneal_clip = c.get_string("clip_schedule") == "linear";
  config.vf_clip_param = c.get_double("vf_clip_param");
  config.vf_loss_coeff = c.get_double("vf_loss_coeff");
  config.entropy_coeff = c.get_double("entropy_coeff");
  config.num_epochs = static_cast<int>(c.get_int("num_epochs"));
  config.minibatch_size = c.get_int("minibatch_size");
  config.max_grad_norm = c.get_double("grad_clip");
  config.normalize_advantages = c.get_bool("normalize_advantages");
  config.normalize_observations = c.get_bool("normalize_observations");
  config.scale_rewards = c.get_bool("scale_rewards");
  config.adam_eps = c.get_double("adam_eps");
  config.total_timesteps = experiment.stop.timesteps_total.value_or(1'000'000);
  return config;
}

PpoAlgorithm::PpoAlgorithm(const Experiment& experiment)
    : setup_(common_worker_setup(experiment)),
      spec_(global_env_registry().spec(experiment.env)),
      train_batch_size_(effective_train_batch_size(experiment.config)) {
  setup_.policy_kind = RolloutPolicyKind::kActorCritic;
  setup_.log_std_init = experiment.config.get_double("log_std_init");
  learner_ = std::make_unique<PpoLearner>(setup_.model_config(spec_), ppo_config_from(experiment), setup_.seed);
}

IterationResult PpoAlgorithm::train_iteration(Sampler& sampler, int64_t timesteps_done) {
  const std::vector<SampleBatch> batches = sampler.collect(train_batch_size_);
  const PpoUpdateMetrics m = learner_->update(batches, timesteps_done);
  sampler.publish(learner_->weights(++version_));
  IterationResult result;
  for (const SampleBatch& batch : batches) result.env_steps += batch.num_transitions();
  result.learner = {{"policy_loss", m.policy_loss},   {"vf_loss", m.vf_loss},
                    {"entropy", m.entropy},           {"approx_kl", m.approx_kl},
                    {"clip_fraction", m.clip_fraction}, {"explained_variance", m.explained_variance},
                    {"lr", m.lr},                     {"clip_param", m.clip_param},
                    {"grad_norm", m.grad_norm},       {"num_minibatch_steps", m.num_minibatch_steps},
                    {"policy_version", version_}};
  return result;
}

std::vector<CheckpointFile> PpoAlgorithm::checkpoint_files() const {
  std::ostringstream model;
  learner_->save(model);
  return {{"model_and_optimizer.pt", model.str()}};
}

nlohmann::json PpoAlgorithm::checkpoint_state() const {
  return {{"learner", learner_->state_json()}, {"policy_version", version_}};
}

void PpoAlgorithm::restore(const Checkpoint& checkpoint) {
  restore_learner_state(checkpoint, "model_and_optimizer.pt", "the PPO learner",
                        [this](std::istream& model, const nlohmann::json& state) {
                          learner_->load(model);
                          learner_->load_state_json(state.at("learner"));
                          version_ = state.at("policy_version").get<uint64_t>();
                        });
}

std::unique_ptr<RolloutPolicy> PpoAlgorithm::evaluation_policy(bool deterministic, uint64_t seed) const {
  WorkerSetup setup = setup_;
  setup.seed = seed;
  setup.worker_index = 0;
  setup.deterministic = deterministic;
  std::unique_ptr<RolloutPolicy> policy = make_rollout_policy(setup, spec_);
  apply_weights(*policy, *current_weights());
  return policy;
}

}  // namespace rlx
