// MaskVelocityEnv: a classic-control task made partially observable, after RL Zoo's
// MaskVelocityWrapper (rl_zoo3/wrappers.py, registered there as <Name>NoVel-v<N>): the base env's
// observation with its velocity entries written as 0. Nothing else changes: the observation space
// (shape, dtype and bounds: RL Zoo's wrapper keeps the base env's space too), action space, time
// limit, reward threshold, dynamics, rewards, terminations, seeding, state(), set_state, pictures
// and exact snapshots are the base env's. A memoryless policy sees positions only and cannot tell
// which way the system moves.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/classic/classic_env.h"

namespace rlx {

// A classic-control env under another id whose observation hides the entries at
// masked_indices() (each written as 0 at every reset, step and set_state).
//
// The env's generator mirrors the base env's (copied after each of its resets) and exact_state()
// is the base env's, so a snapshot of this env is its base env's snapshot at the same point, and
// rlx's renderers draw it as they draw the base env. This holds because a classic-control env
// draws from its generator only when it resets.
class MaskVelocityEnv final : public Env {
 public:
  // Wraps base under `id`; throws std::invalid_argument naming id when base is null, its
  // observation space is not a float32 Box without an action mask, or `masked` is empty or holds
  // an index outside the observation or one twice.
  MaskVelocityEnv(std::string id, std::unique_ptr<ClassicEnv> base, std::vector<int64_t> masked);

  // The spec the env registers: `base` under `id`, every other field unchanged.
  static EnvSpec masked_spec(const EnvSpec& base, std::string id);

  // The wrapped env.
  const Env& base() const { return *base_; }
  // The observation's hidden entries, ascending.
  const std::vector<int64_t>& masked_indices() const { return masked_; }

  // The base env's physical state (velocities included).
  std::vector<double> state() const override { return base_->state(); }

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  // Sets the base env's state (its size and meaning) and writes the masked observation.
  void set_physical_state(const std::vector<double>& state, ObsSpan obs) override;
  // The base env's exact state.
  std::vector<double> exact_state() const override;
  // Restores the base env's exact state now, and its generator and step counter (this env's,
  // which Env::restore sets after this hook) before the next reset or step.
  void restore_exact_state(const std::vector<double>& state) override;
  std::optional<RgbImage> render_image() const override { return base_->render(); }
  double frames_per_second() const override { return base_->render_fps(); }

 private:
  // The base env's snapshot; throws std::logic_error naming the env when the base has none.
  EnvSnapshot base_snapshot() const;
  // Gives the base env this env's generator and step counter (after a restore).
  void sync_base(const Rng& rng);
  // Writes the base env's newest observation into obs with the masked entries 0.
  void write_masked(ObsSpan obs) const;

  std::unique_ptr<ClassicEnv> base_;
  std::vector<int64_t> masked_;
  std::vector<float> base_obs_;  // [observation size] the base env's newest observation
  bool base_stale_ = false;      // a restore left the base env's generator and step counter behind
};

}  // namespace rlx
