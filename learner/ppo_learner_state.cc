// PpoLearner's state: the snapshot that undoes a failed update, the checkpoint file
// (native/ppo_state_file.h, or the LibTorch archive of earlier rlx versions) and state_json.
#include "learner/ppo_learner.h"

#include <torch/serialize/input-archive.h>
#include <torch/torch.h>

#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "learner/tensor_copies.h"
#include "native/ppo_state_file.h"

namespace rlx {

namespace {

constexpr int64_t kArchiveFormatVersion = 1;

// Puts Adam's state for `param` into an optimizer's state map, keyed as LibTorch keys it: by the
// parameter's TensorImpl address as a string in 1.13, as a pointer in 2.x.
template <typename StateMap>
void put_adam_state(StateMap& state, const torch::Tensor& param, std::unique_ptr<torch::optim::AdamParamState> adam) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    state[c10::guts::to_string(param.unsafeGetTensorImpl())] = std::move(adam);
  } else {
    state[static_cast<Key>(param.unsafeGetTensorImpl())] = std::move(adam);
  }
}

}  // namespace

PpoLearner::Snapshot PpoLearner::take_snapshot() const {
  Snapshot snapshot{flat_params_.detach().clone(), {}, 0, obs_stats_, reward_scaler_, num_updates_, scaler_};
  for (const auto& entry : optimizer_->state()) {
    const auto& adam = static_cast<const torch::optim::AdamParamState&>(*entry.second);
    snapshot.adam = {adam.exp_avg().clone(), adam.exp_avg_sq().clone()};
    if (adam.max_exp_avg_sq().defined()) snapshot.adam.push_back(adam.max_exp_avg_sq().clone());
    snapshot.adam_step = adam.step();
  }
  return snapshot;
}

void PpoLearner::restore_snapshot(const Snapshot& snapshot) {
  torch::NoGradGuard no_grad;
  flat_params_.copy_(snapshot.params);
  if (snapshot.adam.empty()) {
    optimizer_->state().clear();  // the failed update was the first: Adam starts afresh
  } else {
    for (auto& entry : optimizer_->state()) {
      auto& adam = static_cast<torch::optim::AdamParamState&>(*entry.second);
      adam.exp_avg().copy_(snapshot.adam[0]);
      adam.exp_avg_sq().copy_(snapshot.adam[1]);
      if (snapshot.adam.size() > 2) adam.max_exp_avg_sq().copy_(snapshot.adam[2]);
      adam.step(snapshot.adam_step);
    }
  }
  obs_stats_ = snapshot.obs_stats;
  reward_scaler_ = snapshot.reward_scaler;
  num_updates_ = snapshot.num_updates;
  scaler_ = snapshot.loss_scaler;
  refresh_obs_tensors();
}

void PpoLearner::save(std::ostream& out) const {
  PpoLearnerState state;
  state.params = host_floats(flat_params_);
  for (const auto& entry : optimizer_->state()) {
    const auto& adam = static_cast<const torch::optim::AdamParamState&>(*entry.second);
    state.adam_step = adam.step();
    state.exp_avg = host_floats(adam.exp_avg());
    state.exp_avg_sq = host_floats(adam.exp_avg_sq());
  }
  write_ppo_learner_state(out, state);
}

void PpoLearner::load(std::istream& in) {
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!is_ppo_learner_state(bytes)) {
    std::istringstream archive(bytes);
    load_torch_archive(archive);
    return;
  }
  std::istringstream file(bytes);
  const PpoLearnerState state = read_ppo_learner_state(file, flat_params_.numel());
  const auto p = static_cast<int64_t>(state.params.size());
  const auto to_device = [&](const std::vector<float>& values) {
    return device_copy(values.data(), {p}, torch::kFloat, device_);
  };
  torch::NoGradGuard no_grad;
  flat_params_.copy_(to_device(state.params));
  optimizer_->state().clear();
  if (state.adam_step > 0) {
    auto adam = std::make_unique<torch::optim::AdamParamState>();
    adam->step(state.adam_step);
    adam->exp_avg(to_device(state.exp_avg));
    adam->exp_avg_sq(to_device(state.exp_avg_sq));
    put_adam_state(optimizer_->state(), flat_params_, std::move(adam));
  }
}

void PpoLearner::load_torch_archive(std::istream& in) {
  torch::serialize::InputArchive archive;
  archive.load_from(in, device_);
  c10::IValue format, count;
  archive.read("format_version", format);
  archive.read("num_parameters", count);
  if (!format.isInt() || format.toInt() != kArchiveFormatVersion) {
    throw std::invalid_argument("PPO learner archive has an unknown format version");
  }
  if (!count.isInt() || count.toInt() != flat_params_.numel()) {
    throw std::invalid_argument("PPO learner archive holds " + (count.isInt() ? std::to_string(count.toInt()) : "?") +
                                " parameters, the model has " + std::to_string(flat_params_.numel()));
  }
  torch::Tensor params;
  archive.read("params", params);
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer_->state().clear();  // state the archive lacks must not survive from before
  optimizer_->load(optimizer_archive);
  // LibTorch 2.x also restores the saved options; the config decides, as with 1.13.
  static_cast<torch::optim::AdamOptions&>(optimizer_->param_groups()[0].options()).eps(config_.adam_eps);
  torch::NoGradGuard no_grad;
  flat_params_.copy_(params.view({-1}));
}

nlohmann::json PpoLearner::state_json() const {
  nlohmann::json state = ppo_statistics_json({obs_stats_, reward_scaler_, num_updates_, seed_});
  if (scaler_.enabled()) state["loss_scaler"] = scaler_.to_json();
  return state;
}

void PpoLearner::load_state_json(const nlohmann::json& state) {
  PpoStatistics statistics = parse_ppo_statistics(state, obs_stats_.size(), config_.gamma, seed_);
  // A resumed fp16 run goes on with its scale (a state without one, e.g. of fp32, keeps the fresh scale).
  LossScaler scaler = scaler_;
  if (scaler.enabled() && state.contains("loss_scaler")) scaler.load_json(state.at("loss_scaler"));
  scaler_ = scaler;
  obs_stats_ = std::move(statistics.obs_stats);
  reward_scaler_ = std::move(statistics.reward_scaler);
  num_updates_ = statistics.num_updates;
  seed_ = statistics.seed;
  refresh_obs_tensors();
}

}  // namespace rlx
