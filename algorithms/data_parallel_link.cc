#include "algorithms/data_parallel_link.h"

#include <chrono>
#include <iostream>

#include "learner/communicator.h"
#include "learner/error_text.h"
#include "learner/fragment_shards.h"

namespace rlx {

DataParallelLink::DataParallelLink(const Experiment& experiment, const DataParallelOptions& options) {
  const CommonConfig& config = experiment.config.common();
  const std::string& device = config.device;
  const auto learners = static_cast<int>(config.num_learners);
  if (options.member != nullptr) {
    member_ = options.member;
  } else if (learners > 1) {
    LearnerGroupOptions o;
    o.num_learners = learners;
    o.device = device;
    o.program = options.program;
    o.timeout = std::chrono::milliseconds(static_cast<int64_t>(config.learner_timeout_s * 1000.0));
    o.payload = experiment_to_json(experiment).dump();
    group_ = std::make_unique<LearnerGroup>(o);
    member_ = &group_->member();
  }
  device_ = member_ != nullptr ? member_->device() : learner_device(device, 0);
}

DataParallelLink::~DataParallelLink() {
  if (!group_) return;
  for (int rank = 1; rank < world(); ++rank) {
    try {
      send_bytes(member_->host(), nlohmann::json{{"op", "stop"}, {"fragments", 0}}.dump(), rank);
    } catch (const std::exception& e) {  // a rank already gone: the group's destructor reaps it
      std::cerr << "rlx: learner rank " << rank << " did not take the stop message: " << error_text(e) << "\n";
    }
  }
}

void DataParallelLink::send(int rank, const nlohmann::json& header, const std::vector<const SampleBatch*>& fragments) {
  nlohmann::json h = header;
  h["fragments"] = fragments.size();
  send_bytes(member_->host(), h.dump(), rank);
  for (const SampleBatch* batch : fragments) send_bytes(member_->host(), pack_fragment(*batch), rank);
}

LearnerCommand DataParallelLink::receive() {
  LearnerCommand command;
  command.header = nlohmann::json::parse(recv_bytes(member_->host(), 0));
  const auto count = command.header.at("fragments").get<size_t>();
  for (size_t i = 0; i < count; ++i) command.fragments.push_back(unpack_fragment(recv_bytes(member_->host(), 0)));
  return command;
}

void DataParallelLink::guarded(const std::function<void()>& f) {
  if (!group_) {
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
  if (group_) group_->check_ranks();
}

}  // namespace rlx
