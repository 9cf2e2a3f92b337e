// DataParallelLink: an algorithm's connection to its data-parallel learner group. On the driver
// (rank 0, `rlx train` with num_learners > 1) it starts the LearnerGroup and sends each rank its
// commands (typed, learner/rank_commands.h, and fragments) over the Gloo group; on ranks >= 1 it
// receives them.
// The driver turns a failed collective into an error naming the learner rank that died, or, in an
// elastic group, re-forms the group (recover) and the algorithm redoes its update.
// A multi-agent run's policies share one group: each policy's link sends its commands through
// the link that started it, each preceded by a select_policy command naming the policy.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "algorithms/data_parallel_options.h"
#include "core/experiment.h"
#include "learner/learner_group.h"

namespace rlx {

class DataParallelLink {
 public:
  // Starts the group when the experiment asks for num_learners > 1 and this is the driver; a
  // member in options makes this a follower, a shared_link one policy's view of that link's
  // group. Throws on a failed start.
  DataParallelLink(const Experiment& experiment, const DataParallelOptions& options);
  // The driver tells every rank to stop, then the group reaps them.
  ~DataParallelLink();

  bool active() const { return member_ != nullptr; }
  bool driver() const { return group_ != nullptr || shared_ != nullptr; }
  int world() const { return member_ ? member_->size() : 1; }
  // The learner device of this rank.
  torch::Device device() const { return device_; }
  LearnerGroupMember& member() { return *member_; }

  // Driver: sends rank r a command with fragments (by pointer, not copied); RankProtocolError
  // when the command breaks its rules.
  void send(int rank, const RankCommand& command, const std::vector<const SampleBatch*>& fragments = {});
  // Follower: the next command from the driver; RankProtocolError naming what is wrong with it.
  LearnerCommand receive();
  // Driver: runs f; a CommunicatorError becomes the error of the rank that died, when one did.
  void guarded(const std::function<void()>& f);
  // Driver: throws when a rank has exited (an elastic group logs it and goes on).
  void check_ranks();

  // Elastic groups (learner/elastic_membership.h): the group is re-formed when a rank is lost
  // and when ranks join.
  bool elastic() const { return member_ != nullptr && member_->elastic(); }
  // The generation of the group this rank trains in (0 for a fixed group).
  int64_t generation() const { return member_ ? member_->generation() : 0; }
  // Driver, at an iteration boundary: takes waiting ranks in (true when the group changed);
  // CommunicatorError when a rank is gone (then recover).
  bool admit_joiners();
  // Driver, after a collective of the current generation failed: re-forms the group of the ranks
  // left; LearnerGroupTooSmall below min_learners.
  void recover(const std::string& reason);
  // Driver: what the elastic group went through (zeros for a fixed group).
  ElasticGroupStats elastic_stats() const;

 private:
  std::unique_ptr<LearnerGroup> group_;
  std::shared_ptr<DataParallelLink> shared_;  // a policy's view: the link that owns the group
  int policy_ = -1;
  LearnerGroupMember* member_ = nullptr;
  torch::Device device_ = torch::kCPU;
};

// Refuses settings a data-parallel group cannot train (ConfigError naming the key): elastic
// groups of algorithms other than PPO and APPO or of several policies, elastic sizes out of
// order, and learner_sync values this build lacks.
void check_data_parallel_settings(const Experiment& experiment);

}  // namespace rlx
