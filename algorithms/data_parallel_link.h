// DataParallelLink: an algorithm's connection to its data-parallel learner group. On the driver
// (rank 0, `rlx train` with num_learners > 1) it starts the LearnerGroup and sends each rank its
// commands (typed, learner/rank_commands.h, and fragments) over the Gloo group; on ranks >= 1 it
// receives them.
// The driver turns a failed collective into an error naming the learner rank that died.
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
  // Driver: throws when a rank has exited.
  void check_ranks();

 private:
  std::unique_ptr<LearnerGroup> group_;
  std::shared_ptr<DataParallelLink> shared_;  // a policy's view: the link that owns the group
  int policy_ = -1;
  LearnerGroupMember* member_ = nullptr;
  torch::Device device_ = torch::kCPU;
};

}  // namespace rlx
