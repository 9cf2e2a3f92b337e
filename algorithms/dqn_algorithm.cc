#include "algorithms/dqn_algorithm.h"

#include <sstream>
#include <stdexcept>

#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "core/stop_signal.h"
#include "envs/experiment_envs.h"
#include "envs/registry.h"
#include "learner/data_parallel.h"
#include "learner/non_finite.h"
#include "learner/replay_shard_transfer.h"
#include "rollout/policy_factory.h"

namespace rlx {

DqnAlgorithm::DqnAlgorithm(const Experiment& experiment, const DataParallelOptions& options)
    : setup_(common_worker_setup(experiment)), spec_(experiment_env_spec(experiment)) {
  DqnConfig config = experiment.config.dqn();
  config.total_timesteps = experiment.stop.schedule_horizon();
  setup_.apex_epsilons = config.apex_epsilons;
  setup_.num_workers = std::max<int>(1, static_cast<int>(experiment.config.common().num_workers));
  setup_.epsilon = config.exploration_initial_eps;
  checkpoint_replay_buffer_ = config.checkpoint_replay_buffer;
  link_ = std::make_unique<DataParallelLink>(experiment, options);
  learner_ = std::make_unique<DqnLearner>(setup_.model, config, setup_.seed, link_->device());
  if (link_->active()) {
    if (config.batch_size % link_->world() != 0) {
      throw ConfigError("batch_size " + std::to_string(config.batch_size) + " must be a multiple of num_learners " +
                        std::to_string(link_->world()) + " (each learner samples batch_size / num_learners)");
    }
    learner_->set_data_parallel_hooks(make_dqn_hooks(link_->member().device_comm(), link_->member().host()));
  }
}

bool DqnAlgorithm::train_rounds(int64_t rounds, int64_t timesteps, DqnUpdateMetrics& last) {
  if (rounds <= 0 || !learner_->ready_on_all_ranks()) return false;
  for (int64_t i = 0; i < rounds; ++i) last = learner_->train(learner_->config().gradient_steps, timesteps);
  return true;
}

void DqnAlgorithm::follow(const LearnerCommand& command) {
  if (std::holds_alternative<SyncLearnerState>(command.command)) {
    broadcast_learner_state(link_->member().host(), *learner_);
  } else if (const auto* step = std::get_if<DqnStepCommand>(&command.command)) {
    for (const SampleBatch& batch : command.fragments) learner_->add(batch);
    DqnUpdateMetrics last;
    train_rounds(step->rounds, step->timesteps, last);
  } else if (const auto* replay = std::get_if<ReplayCheckpointCommand>(&command.command)) {
    send_replay_shard(link_->member().host(), *learner_, static_cast<uint64_t>(replay->from));
  } else if (std::holds_alternative<ReplayRestoreCommand>(command.command)) {
    receive_replay_shard_restore(link_->member().host(), *learner_);
  } else {
    throw RankProtocolError(std::string("a DQN learner rank cannot carry out a ") + rank_command_name(command.command) +
                            " command");
  }
}

std::shared_ptr<Weights> DqnAlgorithm::current_weights() const {
  std::shared_ptr<Weights> weights = learner_->weights(version_);
  if (!setup_.apex_epsilons) weights->epsilon = learner_->epsilon(received_);
  return weights;
}

IterationResult DqnAlgorithm::train_iteration(Sampler& sampler, int64_t timesteps_done) {
  IterationResult result;
  DqnUpdateMetrics last;
  int64_t rounds_run = 0;
  received_ = timesteps_done;
  iteration_steps_ = 0;
  const int world = link_->world();
  while (result.env_steps < kDqnStepsPerIteration) {
    const std::vector<SampleBatch> batches = sampler.collect(1);
    std::vector<std::vector<const SampleBatch*>> dealt(static_cast<size_t>(world));
    for (const SampleBatch& batch : batches) {
      dealt[static_cast<size_t>(dealt_++ % static_cast<uint64_t>(world))].push_back(&batch);
      result.env_steps += batch.num_transitions();
      received_ += batch.num_transitions();
    }
    iteration_steps_ = result.env_steps;
    bool ran = false;
    mid_step_ = world > 1;  // one learner stays consistent through any failure of its own
    link_->guarded([&] {
      if (link_->driver()) {
        link_->check_ranks();
        if (!synced_) {
          for (int rank = 1; rank < world; ++rank) link_->send(rank, SyncLearnerState{});
          broadcast_learner_state(link_->member().host(), *learner_);
          synced_ = true;
        }
      }
      for (const SampleBatch* batch : dealt[0]) learner_->add(*batch);
      const int64_t rounds = learner_->training_rounds_due(received_);
      for (int rank = 1; rank < world; ++rank) {
        link_->send(rank, DqnStepCommand{rounds, received_}, dealt[static_cast<size_t>(rank)]);
      }
      const int64_t steps_before = learner_->num_gradient_steps();
      try {
        ran = train_rounds(rounds, received_, last);
      } catch (const NonFiniteLearnerError&) {
        mid_step_ = false;  // every rank stopped before the same step
        throw;
      } catch (const StopRequested&) {
        // One learner stopped between whole gradient steps for an overdue stop: the weights it
        // holds now are a new version.
        if (learner_->num_gradient_steps() != steps_before) ++version_;
        throw;
      }
      if (ran) rounds_run += rounds;
    });
    mid_step_ = false;
    if (ran) ++version_;
    // Workers need new weights after a round, and the scheduled epsilon whenever it moved.
    const double epsilon = setup_.apex_epsilons ? 0.0 : learner_->epsilon(received_);
    if (ran || epsilon != published_epsilon_) {
      sampler.publish(current_weights());
      published_epsilon_ = epsilon;
    }
  }
  result.learner = {{"loss", last.loss},
                    {"q_mean", last.q_mean},
                    {"td_abs_mean", last.td_abs_mean},
                    {"grad_norm", last.grad_norm},
                    {"lr", last.lr},
                    {"epsilon", learner_->epsilon(received_)},
                    {"beta", last.beta},
                    {"target_updates", learner_->target_updates()},
                    {"num_gradient_steps", learner_->num_gradient_steps()},
                    {"training_rounds", rounds_run},
                    {"buffer_size", learner_->buffer().size()},
                    {"policy_version", version_}};
  if (last.loss_scale > 0.0) {  // precision fp16
    result.learner["loss_scale"] = last.loss_scale;
    result.learner["skipped_steps"] = last.skipped_steps;
  }
  return result;
}

std::vector<CheckpointFile> DqnAlgorithm::checkpoint_files() const {
  std::ostringstream model;
  learner_->save(model);
  std::vector<CheckpointFile> files = {{"q_networks_and_optimizer.pt", model.str()}};
  // The replay's transitions are in segments (write_replay_segments), the rest of each shard's
  // state here.
  files.insert(files.end(), replay_rests_.begin(), replay_rests_.end());
  return files;
}

nlohmann::json DqnAlgorithm::checkpoint_state() const {
  return {{"learner", learner_->state_json()},
          {"policy_version", version_},
          {"received_steps", received_},
          {"dealt_fragments", dealt_}};
}

void DqnAlgorithm::restore(const Checkpoint& checkpoint) {
  restore_learner_state(checkpoint, "q_networks_and_optimizer.pt", "the DQN learner",
                        [this](std::istream& model, const nlohmann::json& state) {
                          learner_->load(model);
                          learner_->load_state_json(state.at("learner"));
                          version_ = state.at("policy_version").get<uint64_t>();
                          received_ = state.at("received_steps").get<int64_t>();
                          dealt_ = state.value("dealt_fragments", uint64_t{0});
                        });
  if (checkpoint_replay_buffer_) restore_replay(checkpoint);
  synced_ = false;
}

std::unique_ptr<RolloutPolicy> DqnAlgorithm::evaluation_policy(bool deterministic, uint64_t seed) const {
  WorkerSetup setup = setup_;
  setup.seed = seed;
  setup.worker_index = 0;
  setup.apex_epsilons = false;
  setup.epsilon = deterministic ? 0.0 : learner_->config().exploration_final_eps;
  std::unique_ptr<RolloutPolicy> policy = make_rollout_policy(setup, spec_);
  std::shared_ptr<Weights> weights = learner_->weights(version_);
  apply_weights(*policy, *weights);
  return policy;
}

}  // namespace rlx
