#include "envs/classic/mask_velocity.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace rlx {
namespace {

// The spec of `base`; throws std::invalid_argument naming `id` when there is no base env.
const EnvSpec& base_spec(const std::string& id, const ClassicEnv* base) {
  if (base == nullptr) throw std::invalid_argument(id + ": no base env to mask the velocities of");
  return base->spec();
}

// `masked` ascending; throws MaskVelocityEnv's std::invalid_argument naming `id` unless `base` can
// be wrapped with those entries hidden.
std::vector<int64_t> checked_mask(const std::string& id, const ClassicEnv& base, std::vector<int64_t> masked) {
  const EnvSpec& spec = base.spec();
  if (!spec.observation_space.is_float_box() || spec.action_mask) {
    throw std::invalid_argument(id + ": cannot mask the velocities of " + spec.id + ", whose observation is " +
                                spec.observation_space.to_string() + (spec.action_mask ? " with an action mask" : "") +
                                ": expected a float32 Box without a mask");
  }
  const int64_t size = spec.observation_space.size();
  if (masked.empty()) throw std::invalid_argument(id + ": no observation entries of " + spec.id + " to mask");
  std::sort(masked.begin(), masked.end());
  for (size_t i = 0; i < masked.size(); ++i) {
    if (masked[i] < 0 || masked[i] >= size) {
      throw std::invalid_argument(id + ": masked index " + std::to_string(masked[i]) + " is outside " + spec.id +
                                  "'s " + std::to_string(size) + " observation entries");
    }
    if (i > 0 && masked[i] == masked[i - 1]) {
      throw std::invalid_argument(id + ": masked index " + std::to_string(masked[i]) + " is given twice");
    }
  }
  return masked;
}

// Runs `call` on the base env with its std::invalid_argument (a bad action, state or snapshot)
// prefixed with the wrapping env's id.
template <typename Call>
auto named(const std::string& id, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(id + ": " + error.what());
  }
}

}  // namespace

MaskVelocityEnv::MaskVelocityEnv(std::string id, std::unique_ptr<ClassicEnv> base, std::vector<int64_t> masked)
    : Env(masked_spec(base_spec(id, base.get()), id)),
      base_(std::move(base)),
      masked_(checked_mask(id, *base_, std::move(masked))),
      base_obs_(static_cast<size_t>(base_->observation_layout().float_slots)) {}

EnvSpec MaskVelocityEnv::masked_spec(const EnvSpec& base, std::string id) {
  EnvSpec spec = base;
  spec.id = std::move(id);
  return spec;
}

void MaskVelocityEnv::reset_episode(Rng& rng, ObsSpan obs) {
  if (base_stale_) sync_base(rng);
  base_->reset(reset_seed(), base_obs_.data());
  rng.set_state(base_snapshot().rng);  // mirror the base env's stream (it draws only at resets)
  write_masked(obs);
}

StepResult MaskVelocityEnv::step_episode(const Action& action, ObsSpan obs) {
  if (base_stale_) sync_base(rng());
  const StepResult result = named(spec().id, [&] { return base_->step(action, base_obs_.data()); });
  write_masked(obs);
  return result;
}

void MaskVelocityEnv::set_physical_state(const std::vector<double>& state, ObsSpan obs) {
  named(spec().id, [&] { base_->set_state(state, base_obs_.data()); });
  write_masked(obs);
}

std::vector<double> MaskVelocityEnv::exact_state() const { return base_snapshot().exact_state; }

void MaskVelocityEnv::restore_exact_state(const std::vector<double>& state) {
  EnvSnapshot snapshot = base_snapshot();
  snapshot.exact_state = state;
  named(spec().id, [&] { base_->restore(snapshot); });
  base_stale_ = true;
}

EnvSnapshot MaskVelocityEnv::base_snapshot() const {
  std::optional<EnvSnapshot> snapshot = base_->snapshot();
  if (!snapshot) throw std::logic_error(spec().id + ": its base env " + base_->spec().id + " gives no exact state");
  return std::move(*snapshot);
}

void MaskVelocityEnv::sync_base(const Rng& rng) {
  EnvSnapshot snapshot = base_snapshot();
  snapshot.rng = rng.state();
  snapshot.seeded = true;
  snapshot.elapsed_steps = elapsed_steps();
  base_->restore(snapshot);
  base_stale_ = false;
}

void MaskVelocityEnv::write_masked(ObsSpan obs) const {
  std::memcpy(obs.data(), base_obs_.data(), base_obs_.size() * sizeof(float));
  for (const int64_t i : masked_) obs[i] = 0.0f;
}

}  // namespace rlx
