// DqnLearner's checkpoint: the networks and Adam state (a torch archive), the replay buffer's
// bytes, and the counters that are the rest of its state (see learner/dqn_learner.h).
#include "learner/dqn_learner.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>

#include "learner/dqn_replay.h"

namespace rlx {

namespace {

int64_t json_int(const nlohmann::json& state, const char* key) {
  if (!state.is_object() || !state.contains(key) || !state.at(key).is_number_integer()) {
    throw std::invalid_argument(std::string("DQN learner state needs an integer \"") + key + "\"");
  }
  return state.at(key).get<int64_t>();
}

}  // namespace

void DqnLearner::save(std::ostream& out) const {
  torch::serialize::OutputArchive archive;
  archive.write("online", flat_online_.detach().to(torch::kCPU));
  archive.write("target", flat_target_.detach().to(torch::kCPU));
  torch::serialize::OutputArchive optimizer_archive;
  optimizer_->save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.save_to(out);
}

void DqnLearner::load(std::istream& in) {
  torch::serialize::InputArchive archive;
  archive.load_from(in, device_);
  torch::Tensor online, target;
  archive.read("online", online);
  archive.read("target", target);
  if (online.numel() != flat_online_.numel() || target.numel() != flat_target_.numel()) {
    throw std::invalid_argument("DQN checkpoint holds " + std::to_string(online.numel()) + " parameters, the model has " +
                                std::to_string(flat_online_.numel()));
  }
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  {
    torch::NoGradGuard no_grad;
    flat_online_.copy_(online.view(flat_online_.sizes()));
    flat_target_.copy_(target.view(flat_target_.sizes()));
  }
  optimizer_->load(optimizer_archive);
  apply_optimizer_options();
}

std::string DqnLearner::save_replay() const {
  BinaryWriter out;
  buffer_->save(out);
  return out.take();
}

std::unique_ptr<ReplayBuffer> DqnLearner::empty_buffer() const {
  DqnConfig config = config_;
  config.buffer_size = buffer_->capacity();  // this rank's shard when data-parallel
  return make_dqn_replay_buffer(config, stored_obs_size());
}

ReplayListing DqnLearner::checkpoint_replay(const std::filesystem::path& dir) {
  const ReplayBuffer& buffer = *buffer_;
  return replay_log_.checkpoint(dir, static_cast<uint64_t>(buffer.total_added()), static_cast<uint64_t>(buffer.size()),
                                [&](uint64_t first, uint64_t end, SegmentWriter& out) { buffer.write_rows(first, end, out); });
}

std::string DqnLearner::save_replay_rest() const {
  BinaryWriter out;
  buffer_->save_rest(out);
  return out.take();
}

void DqnLearner::restore_replay(const std::filesystem::path& dir, const ReplayListing& listing, const std::string& rest) {
  std::unique_ptr<ReplayBuffer> buffer = empty_buffer();
  buffer->reset_to(listing.inserted);
  ReplaySegmentLog log;
  log.restore(dir, listing, static_cast<uint64_t>(buffer->capacity()),
              [&](const ReplaySegment& segment, SegmentReader& in) { buffer->read_rows(segment.first, segment.end, in); });
  BinaryReader in(rest, "the replay buffer's n-step windows and priorities");
  buffer->load_rest(in);
  in.expect_end();
  set_buffer(std::move(buffer));
  replay_log_ = std::move(log);
}

void DqnLearner::load_replay(const std::string& bytes) {
  std::unique_ptr<ReplayBuffer> buffer = empty_buffer();
  BinaryReader in(bytes, "the replay buffer");
  buffer->load(in);
  in.expect_end();
  set_buffer(std::move(buffer));
  replay_log_ = ReplaySegmentLog();  // the next checkpoint writes every held transition anew
}

nlohmann::json DqnLearner::state_json() const {
  nlohmann::json state = {{"seed", seed_},
                          {"num_gradient_steps", num_gradient_steps_},
                          {"target_updates", target_updates_},
                          {"target_timesteps", target_timesteps_},
                          {"received_steps", received_steps_}};
  if (scaler_.enabled()) state["loss_scaler"] = scaler_.to_json();
  return state;
}

void DqnLearner::load_state_json(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("seed") || !state.at("seed").is_number_unsigned()) {
    throw std::invalid_argument("DQN learner state needs an unsigned integer \"seed\"");
  }
  const int64_t steps = json_int(state, "num_gradient_steps");
  const int64_t updates = json_int(state, "target_updates");
  const int64_t target_timesteps = json_int(state, "target_timesteps");
  const int64_t received = json_int(state, "received_steps");
  if (steps < 0 || updates < 0 || target_timesteps < 0 || received < 0) throw std::invalid_argument("DQN learner state has a negative counter");
  // A resumed fp16 run goes on with its scale (a state without one, e.g. of fp32, keeps the fresh scale).
  LossScaler scaler = scaler_;
  if (scaler.enabled() && state.contains("loss_scaler")) scaler.load_json(state.at("loss_scaler"));
  scaler_ = scaler;
  seed_ = state.at("seed").get<uint64_t>();
  num_gradient_steps_ = steps;
  target_updates_ = updates;
  target_timesteps_ = target_timesteps;
  received_steps_ = received;
}

}  // namespace rlx
