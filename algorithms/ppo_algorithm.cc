#include "algorithms/ppo_algorithm.h"

#include <chrono>
#include <sstream>
#include <stdexcept>

#include "algorithms/ppo_results.h"
#include "envs/experiment_envs.h"
#include "envs/registry.h"
#include "learner/data_parallel.h"
#include "learner/fragment_shards.h"
#include "native/ppo_state_file.h"
#include "learner/non_finite.h"
#include "core/error_text.h"
#include "core/stop_signal.h"

namespace rlx {

namespace {

constexpr const char* kLegacyPpoArchive = "model_and_optimizer.pt";

}  // namespace

PpoAlgorithm::PpoAlgorithm(const Experiment& experiment, const DataParallelOptions& options)
    : PpoAlgorithm(experiment, options, experiment.config.ppo()) {}

PpoAlgorithm::PpoAlgorithm(const Experiment& experiment, const DataParallelOptions& options, PpoConfig config)
    : setup_(common_worker_setup(experiment)),
      spec_(experiment_env_spec(experiment)),
      train_batch_size_(effective_train_batch_size(experiment.config)) {
  config.total_timesteps = experiment.stop.schedule_horizon();
  setup_.behaviour_values = !config.recompute_values;  // the learner computes V(s) itself
  link_ = std::make_unique<DataParallelLink>(experiment, options);
  learner_ = std::make_unique<PpoLearner>(setup_.model, config, setup_.seed, link_->device());
  if (link_->active()) {
    const CommonConfig& common = experiment.config.common();
    straggler_ = Straggler{static_cast<int>(common.debug_slow_rank), common.debug_slow_factor};
    parameter_server_ = common.learner_sync == "parameter_server";
    remote_ranks_ = options.placement.has_value();
    if (options.placement) server_host_ = options.placement->master_addr;
    max_staleness_ = common.max_staleness;
    timeout_ = std::chrono::milliseconds(static_cast<int64_t>(common.learner_timeout_s * 1000.0));
    learner_config_ = config;
    // A parameter server's ranks each compute whole minibatches: no collective inside an update.
    if (!parameter_server_) {
      learner_->set_data_parallel_hooks(
          make_ppo_hooks(link_->member().device_comm(), link_->member().host(), nullptr, straggler_));
    }
  }
}

PpoUpdateMetrics PpoAlgorithm::data_parallel_update(const std::vector<SampleBatch>& batches, int64_t timesteps_done,
                                                    double& scatter_s) {
  // Rewards are scaled on the whole fragments, in order (the scaler keeps per-env returns), once.
  if (parameter_server_) return server_update(batches, timesteps_done, scatter_s);
  std::vector<SampleBatch> scaled = batches;
  learner_->scale_rewards(scaled);
  PpoUpdateMetrics m;
  if (!link_->elastic()) {
    link_->guarded([&] { m = sharded_update(scaled, timesteps_done, scatter_s); });
    return m;
  }
  // An elastic group: a generation that fails mid-update leaves the driver's learner as it was
  // before the update, the group is re-formed of the ranks left, and the update runs again on it.
  const LearnerRollback rollback(*learner_);
  for (;;) {
    try {
      link_->admit_joiners();
      return sharded_update(scaled, timesteps_done, scatter_s);
    } catch (const CommunicatorError& e) {
      rollback.restore(*learner_);
      ++elastic_retries_;
      link_->recover(error_text(e));  // LearnerGroupTooSmall below min_learners
    }
  }
}

PpoUpdateMetrics PpoAlgorithm::sharded_update(const std::vector<SampleBatch>& scaled, int64_t timesteps_done,
                                              double& scatter_s) {
  const int world = link_->world();
  link_->check_ranks();
  if (synced_generation_ != link_->generation()) {
    for (int rank = 1; rank < world; ++rank) link_->send(rank, SyncLearnerState{});
    broadcast_learner_state(link_->member().host(), *learner_);
    synced_generation_ = link_->generation();
  }
  const auto scatter_start = std::chrono::steady_clock::now();
  const ShardedBatch sharded = shard_batch(scaled, world);
  const std::vector<int> owner = assign_fragments(sharded.fragments, world);
  std::vector<std::vector<const SampleBatch*>> mine(static_cast<size_t>(world));
  std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(world)), strides(static_cast<size_t>(world));
  for (size_t f = 0; f < sharded.fragments.size(); ++f) {
    const auto r = static_cast<size_t>(owner[f]);
    mine[r].push_back(&sharded.fragments[f]);
    offsets[r].push_back(sharded.offsets[f]);
    strides[r].push_back(sharded.strides[f]);
  }
  const int64_t total = sharded.total;
  for (int rank = 1; rank < world; ++rank) {
    const auto r = static_cast<size_t>(rank);
    link_->send(rank, PpoUpdateCommand{timesteps_done, total, offsets[r], strides[r]}, mine[r]);
  }
  scatter_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - scatter_start).count();
  std::vector<SampleBatch> local;
  for (const SampleBatch* batch : mine[0]) local.push_back(*batch);
  PpoShard shard;
  shard.global_samples = total;
  shard.fragment_offsets = offsets[0];
  shard.fragment_strides = strides[0];
  shard.rewards_prescaled = true;
  return learner_->update(local, timesteps_done, &shard);
}

void PpoAlgorithm::follow(const LearnerCommand& command) {
  if (std::holds_alternative<SyncLearnerState>(command.command)) {
    broadcast_learner_state(link_->member().host(), *learner_);
  } else if (const auto* ps = std::get_if<PsUpdateCommand>(&command.command)) {
    run_server_tasks(*learner_, command.fragments, ps->timesteps_done, ps->iteration);
  } else if (const auto* update = std::get_if<PpoUpdateCommand>(&command.command)) {
    PpoShard shard;
    shard.global_samples = update->global_samples;
    shard.fragment_offsets = update->fragment_offsets;
    shard.fragment_strides = update->fragment_strides;
    shard.rewards_prescaled = true;
    learner_->update(command.fragments, update->timesteps_done, &shard);
  } else {
    throw RankProtocolError(std::string("a PPO learner rank cannot carry out a ") + rank_command_name(command.command) +
                            " command");
  }
}

PpoUpdateMetrics PpoAlgorithm::update_learner(const std::vector<SampleBatch>& batches, int64_t timesteps_done,
                                              double& scatter_s) {
  scatter_s = 0.0;
  PpoUpdateMetrics m;
  mid_update_ = true;
  try {
    m = link_->driver() ? data_parallel_update(batches, timesteps_done, scatter_s) : learner_->update(batches, timesteps_done);
  } catch (const NonFiniteLearnerError&) {
    mid_update_ = false;  // the learner undid the update
    throw;
  } catch (const LearnerGroupTooSmall&) {
    mid_update_ = false;  // the driver's learner was rolled back: the run checkpoints it
    throw;
  } catch (const StopRequested&) {
    // Only one learner abandons an update for an overdue stop (a data-parallel one finishes), and
    // it undid the update first.
    mid_update_ = false;
    throw;
  }
  mid_update_ = false;
  return m;
}

nlohmann::json PpoAlgorithm::learner_columns(const PpoUpdateMetrics& m, double scatter_s) const {
  nlohmann::json columns = ppo_learner_columns(m, version_);
  if (link_->driver()) {
    columns["num_learners"] = link_->world();
    columns["scatter_s"] = scatter_s;
    if (parameter_server_) {
      columns["learner_sync"] = "parameter_server";
      columns["staleness_mean"] = last_iteration_.staleness_mean;
      columns["staleness_max"] = last_iteration_.staleness_max;
      columns["staleness_counts"] = last_iteration_.staleness_counts;
      columns["tasks_per_rank"] = last_iteration_.tasks_per_rank;
      columns["held_back"] = last_iteration_.held_back;
      columns["ps_refused"] = last_iteration_.refused;
    }
    if (link_->elastic()) {
      const ElasticGroupStats stats = link_->elastic_stats();
      columns["generation"] = stats.generation;
      columns["regroups"] = stats.regroups;
      columns["ranks_lost"] = stats.ranks_lost;
      columns["ranks_joined"] = stats.ranks_joined;
      columns["regroup_s"] = stats.regroup_s;
      columns["updates_redone"] = elastic_retries_;
    }
  }
  return columns;
}

IterationResult PpoAlgorithm::train_iteration(Sampler& sampler, int64_t timesteps_done) {
  const std::vector<SampleBatch> batches = sampler.collect(train_batch_size_);
  double scatter_s = 0.0;
  const PpoUpdateMetrics m = update_learner(batches, timesteps_done, scatter_s);
  sampler.publish(learner_->weights(++version_));
  IterationResult result;
  for (const SampleBatch& batch : batches) result.env_steps += batch.num_transitions();
  result.learner = learner_columns(m, scatter_s);
  return result;
}

std::vector<CheckpointFile> PpoAlgorithm::checkpoint_files() const {
  std::ostringstream file;
  learner_->save(file);
  return {{kPpoLearnerFile, file.str()}};
}

nlohmann::json PpoAlgorithm::checkpoint_state() const {
  return {{"learner", learner_->state_json()}, {"policy_version", version_}};
}

void PpoAlgorithm::restore(const Checkpoint& checkpoint) {
  // Checkpoints of rlx before the one PPO file format hold a LibTorch archive under another name.
  const bool legacy = checkpoint.files.count(kPpoLearnerFile) == 0 && checkpoint.files.count(kLegacyPpoArchive) == 1;
  restore_learner_state(checkpoint, legacy ? kLegacyPpoArchive : kPpoLearnerFile, "the PPO learner",
                        [this](std::istream& model, const nlohmann::json& state) {
                          learner_->load(model);
                          learner_->load_state_json(state.at("learner"));
                          version_ = state.at("policy_version").get<uint64_t>();
                        });
  synced_generation_ = -1;
}

std::unique_ptr<RolloutPolicy> PpoAlgorithm::evaluation_policy(bool deterministic, uint64_t seed) const {
  return weighted_evaluation_policy(setup_, spec_, *current_weights(), deterministic, seed);
}

}  // namespace rlx
