#include "algorithms/data_parallel_link.h"

#include <chrono>
#include <stdexcept>

#include "core/config_error.h"
#include "core/log.h"
#include "algorithms/multi_agent_algorithm.h"
#include "learner/communicator.h"
#include "core/error_text.h"
#include "learner/fragment_shards.h"

namespace rlx {

DataParallelLink::DataParallelLink(const Experiment& experiment, const DataParallelOptions& options) {
  const CommonConfig& config = experiment.config.common();
  const std::string& device = config.device;
  const auto learners = static_cast<int>(config.num_learners);
  if (options.member != nullptr) {
    member_ = options.member;
  } else if (options.shared_link != nullptr) {
    if (options.policy < 0) throw std::logic_error("DataParallelLink: a policy's view of a shared group needs the policy");
    shared_ = options.shared_link;
    policy_ = options.policy;
    member_ = &shared_->member();
  } else if (learners > 1 || (config.elastic && config.max_learners > 1)) {
    check_data_parallel_settings(experiment);
    LearnerGroupOptions o;
    o.num_learners = learners;
    o.device = device;
    o.program = options.program;
    o.timeout = std::chrono::milliseconds(static_cast<int64_t>(config.learner_timeout_s * 1000.0));
    o.payload = experiment_to_json(experiment).dump();
    o.log_dir = options.log_dir;
    o.launcher = options.launcher;
    o.placement = options.placement;
    o.elastic = config.elastic;
    o.min_learners = static_cast<int>(config.min_learners);
    o.max_learners = static_cast<int>(config.max_learners);
    if (config.elastic && !options.log_dir.empty()) o.join_file = options.log_dir.parent_path() / kLearnerJoinFileName;
    group_ = std::make_unique<LearnerGroup>(o);
    member_ = &group_->member();
  }
  device_ = member_ != nullptr ? member_->device() : learner_device(device, 0);
}

DataParallelLink::~DataParallelLink() {
  if (!group_) return;
  for (int rank = 1; rank < world(); ++rank) {
    try {
      send(rank, StopRank{});
    } catch (const std::exception& e) {  // a rank already gone: the group's destructor reaps it
      logger().warn("learner rank {} did not take the stop message: {}", rank, error_text(e));
    }
  }
}

void DataParallelLink::send(int rank, const RankCommand& command, const std::vector<const SampleBatch*>& fragments) {
  if (shared_) send_bytes(member_->host(), encode_rank_command(SelectPolicyCommand{policy_}, 0), rank);
  send_bytes(member_->host(), encode_rank_command(command, fragments.size()), rank);
  for (const SampleBatch* batch : fragments) send_bytes(member_->host(), pack_fragment(*batch), rank);
  logger().trace("sent learner rank {} a {} command with {} fragments", rank, rank_command_name(command), fragments.size());
}

LearnerCommand DataParallelLink::receive() {
  DecodedRankCommand decoded = decode_rank_command(recv_bytes(member_->host(), 0));
  LearnerCommand command{std::move(decoded.command), {}};
  for (size_t i = 0; i < decoded.fragments; ++i) command.fragments.push_back(unpack_fragment(recv_bytes(member_->host(), 0)));
  return command;
}

void DataParallelLink::guarded(const std::function<void()>& f) {
  if (shared_) {
    shared_->guarded(f);
    return;
  }
  if (!group_ || group_->elastic()) {  // an elastic group's failure is the algorithm's to recover from
    f();
    return;
  }
  try {
    f();
  } catch (const CommunicatorError&) {
    group_->check_ranks_for(std::chrono::milliseconds(2000));  // throws naming the rank that died
    throw;
  }
}

void DataParallelLink::check_ranks() {
  if (shared_) shared_->check_ranks();
  if (group_) group_->check_ranks();
}

bool DataParallelLink::admit_joiners() { return group_ && group_->admit_joiners(); }

void DataParallelLink::recover(const std::string& reason) {
  if (!group_ || !group_->elastic()) throw std::logic_error("DataParallelLink::recover: not the driver of an elastic group");
  group_->recover(reason);
}

ElasticGroupStats DataParallelLink::elastic_stats() const { return group_ ? group_->elastic_stats() : ElasticGroupStats{}; }

void check_data_parallel_settings(const Experiment& experiment) {
  const CommonConfig& config = experiment.config.common();
  if (config.learner_sync == "parameter_server") {
    const auto refuse = [](const std::string& what) {
      return ConfigError("learner_sync: parameter_server " + what + "; use learner_sync: allreduce");
    };
    if (experiment.algorithm != AlgorithmKind::kPPO && experiment.algorithm != AlgorithmKind::kAPPO) {
      throw refuse(std::string("serves PPO's and APPO's minibatch steps, not ") + algorithm_name(experiment.algorithm) + "'s");
    }
    if (is_multi_agent_experiment(experiment)) throw refuse("trains one policy");
    if (config.elastic) throw refuse("is not elastic (set elastic: false)");
    if (config.recurrent()) throw refuse("trains no recurrent model (use_lstm, use_gru)");
    if (experiment.config.ppo().precision == "fp16") throw refuse("does not train in precision fp16 (bf16 works)");
    if (config.device != "cpu") throw refuse("runs its server on the CPU: device must be cpu");
  }
  if (!config.elastic) return;
  if (experiment.algorithm != AlgorithmKind::kPPO && experiment.algorithm != AlgorithmKind::kAPPO) {
    throw ConfigError(std::string("elastic: true re-forms PPO's and APPO's learner groups; ") +
                      algorithm_name(experiment.algorithm) +
                      "'s ranks each hold a replay shard that a lost rank takes with it (set elastic: false)");
  }
  if (is_multi_agent_experiment(experiment)) {
    throw ConfigError("elastic: true trains one policy; a multi-agent run's learner group is not elastic (set elastic: false)");
  }
  const int64_t max_learners = config.max_learners == 0 ? config.num_learners : config.max_learners;
  if (config.min_learners > config.num_learners || config.num_learners > max_learners) {
    throw ConfigError("elastic: needs min_learners <= num_learners <= max_learners, got min_learners " +
                      std::to_string(config.min_learners) + ", num_learners " + std::to_string(config.num_learners) +
                      ", max_learners " + std::to_string(max_learners));
  }
}

}  // namespace rlx
