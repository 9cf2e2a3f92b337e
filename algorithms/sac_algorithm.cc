#include "algorithms/sac_algorithm.h"

#include <sstream>
#include <stdexcept>

#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "core/stop_signal.h"
#include "envs/experiment_envs.h"
#include "envs/registry.h"

namespace rlx {

namespace {

// Why SAC cannot train the experiment's config, or nullopt.
std::optional<std::string> sac_refusal(const CommonConfig& common) {
  if (common.learner_backend == "torch") {
    return "SAC trains with the native learner only, but learner_backend is torch (use native or auto)";
  }
  if (common.device != "cpu") return "SAC learns on the CPU, but device is " + common.device;
  if (common.num_learners != 1) {
    return "SAC is one learner, but num_learners is " + std::to_string(common.num_learners);
  }
  return std::nullopt;
}

}  // namespace

SacAlgorithm::SacAlgorithm(const Experiment& experiment)
    : setup_(common_worker_setup(experiment)), spec_(experiment_env_spec(experiment)) {
  if (auto refusal = sac_refusal(experiment.config.common())) throw ConfigError(experiment.source + ": " + *refusal);
  SacConfig config = experiment.config.sac();
  config.total_timesteps = experiment.stop.schedule_horizon();
  setup_.epsilon = config.learning_starts > 0 ? 1.0 : 0.0;
  learner_ = std::make_unique<NativeSacLearner>(setup_.model, config, setup_.seed);
}

double SacAlgorithm::exploration_rate() const {
  return received_ < learner_->config().learning_starts ? 1.0 : 0.0;
}

std::shared_ptr<Weights> SacAlgorithm::current_weights() const {
  std::shared_ptr<Weights> weights = learner_->weights(version_);
  weights->epsilon = exploration_rate();
  return weights;
}

IterationResult SacAlgorithm::train_iteration(Sampler& sampler, int64_t timesteps_done) {
  IterationResult result;
  SacUpdateMetrics last;
  int64_t gradient_steps = 0;
  received_ = timesteps_done;
  iteration_steps_ = 0;
  while (result.env_steps < kSacStepsPerIteration) {
    for (const SampleBatch& batch : sampler.collect(1)) {
      learner_->add(batch);
      result.env_steps += batch.num_transitions();
      received_ += batch.num_transitions();
      iteration_steps_ = result.env_steps;
    }
    const int64_t due = learner_->steps_due(received_);
    if (due > 0) {
      const int64_t steps_before = learner_->num_gradient_steps();
      try {
        last = learner_->train(due, received_);
      } catch (const StopRequested&) {
        // Stopped between whole gradient steps for an overdue stop: the weights held now are a new version.
        if (learner_->num_gradient_steps() != steps_before) ++version_;
        throw;
      }
      gradient_steps += due;
      ++version_;
    }
    if (due > 0 || exploration_rate() != published_rate_) {
      sampler.publish(current_weights());
      published_rate_ = exploration_rate();
    }
  }
  result.learner = {{"critic_loss", last.critic_loss},
                    {"actor_loss", last.actor_loss},
                    {"alpha", learner_->alpha()},
                    {"entropy", last.entropy},
                    {"q_mean", last.q_mean},
                    {"critic_grad_norm", last.critic_grad_norm},
                    {"actor_grad_norm", last.actor_grad_norm},
                    {"lr", last.lr},
                    {"gradient_steps", gradient_steps},
                    {"num_gradient_steps", learner_->num_gradient_steps()},
                    {"buffer_size", learner_->replay().size()},
                    {"exploration_rate", exploration_rate()},
                    {"policy_version", version_}};
  return result;
}

std::vector<CheckpointFile> SacAlgorithm::checkpoint_files() const {
  std::ostringstream model;
  learner_->save(model);
  return {{kLearnerFileName, model.str()}};  // the replay goes in segments (write_replay_segments)
}

nlohmann::json SacAlgorithm::write_replay_segments(const std::filesystem::path& replay_dir) {
  if (!learner_->config().checkpoint_replay_buffer) return nullptr;
  return learner_->checkpoint_replay(replay_dir).to_json();
}

nlohmann::json SacAlgorithm::checkpoint_state() const {
  return {{"policy_version", version_}, {"received_steps", received_}};
}

void SacAlgorithm::restore(const Checkpoint& checkpoint) {
  restore_learner_state(checkpoint, kLearnerFileName, "the SAC learner",
                        [this](std::istream& model, const nlohmann::json& state) {
                          learner_->load(model);
                          version_ = state.at("policy_version").get<uint64_t>();
                          received_ = state.at("received_steps").get<int64_t>();
                        });
  if (learner_->config().checkpoint_replay_buffer) {
    if (const auto listing = checkpoint.manifest.find("replay"); listing != checkpoint.manifest.end()) {
      const std::filesystem::path dir = trial_dir_of_checkpoint(checkpoint.path) / kReplayDirName;
      try {
        learner_->restore_replay(dir, ReplayListing::from_json(*listing));
      } catch (const std::exception& error) {
        throw CheckpointRefused(checkpoint.path.string() + ": cannot restore the replay buffer: " + error.what());
      }
    } else {  // a checkpoint from before replay segments: the whole buffer in one file
      restore_replay_file(checkpoint, kReplayFileName, [this](const std::string& bytes) { learner_->load_replay(bytes); });
    }
  }
  published_rate_ = -1;
}

std::unique_ptr<RolloutPolicy> SacAlgorithm::evaluation_policy(bool deterministic, uint64_t seed) const {
  WorkerSetup setup = setup_;
  setup.epsilon = 0.0;  // the policy itself, even before learning started
  return weighted_evaluation_policy(setup, spec_, *learner_->weights(version_), deterministic, seed);
}

void SacAlgorithm::follow(const LearnerCommand& command) {
  (void)command;
  throw std::logic_error("the SAC learner has no data-parallel ranks to command");
}

}  // namespace rlx
