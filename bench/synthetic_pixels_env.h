// Synthetic/Pixels84-v0: an Atari-sized pixel env whose step costs next to nothing, so that a
// benchmark of byte observations (84x84x4 uint8, the Atari frame stack) measures rlx's own path
// (the env API's checks and copies, VectorEnv, fragments, the wire) and not an emulator. Benchmark
// code: registered only by the benchmark commands (`rlx bench ...`, `rlx envs bench`), never in
// the built-in registry users see; the workers a benchmark starts load it as an env plugin
// (rlx-synthetic-envs.so, built from synthetic_envs_plugin.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "envs/registry.h"

namespace rlx {

// Each observation is one of kRingSize precomputed frame stacks, copied whole (28,224 bytes) and
// then marked with the agent's 2x2 square; stack k holds frames k .. k + 3 of a moving gradient
// in its four channels (HWC), so consecutive observations shift by one frame as an Atari frame
// stack does. Actions: 0 no-op, 1 up, 2 right, 3 down, 4 left move the agent a pixel (within the
// frame), 5 fire; reward 1 when the action is step mod 6, else 0. No termination; 1,000 steps.
class SyntheticPixelsEnv final : public Env {
 public:
  static constexpr const char* kId = "Synthetic/Pixels84-v0";
  static constexpr int kSide = 84;
  static constexpr int kStack = 4;
  static constexpr int kActions = 6;
  static constexpr int kRingSize = 8;
  static constexpr int kEpisodeSteps = 1000;
  static constexpr int64_t kObservationBytes = int64_t{kSide} * kSide * kStack;

  SyntheticPixelsEnv();

  // Box(0, 255, (84, 84, 4), uint8), Discrete(6), 1,000 steps, no reward threshold.
  static EnvSpec default_spec();

 protected:
  // Draws the ring's phase and the agent's place.
  void reset_episode(Rng& rng, ObsSpan obs) override;
  // Throws std::invalid_argument for an action outside [0, 6).
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  // {phase, x, y}.
  std::vector<double> exact_state() const override;
  // Throws std::invalid_argument unless three integers in range.
  void restore_exact_state(const std::vector<double>& state) override;

 private:
  // Copies the current stack and marks the agent.
  void write(ObsSpan obs) const;

  int phase_ = 0;  // the ring's stack shown now, in [0, kRingSize)
  int x_ = 0;      // the agent's top-left pixel, in [0, kSide - 2]
  int y_ = 0;
};

// Adds Synthetic/Pixels84-v0 to registrar.
void register_synthetic_envs(EnvRegistrar& registrar);

// Adds the synthetic envs to global_env_registry() unless they are there already (every
// benchmark command calls it first). Defined in synthetic_envs_host.cc, so that this file and
// synthetic_pixels_env.cc compile into the env plugin too (synthetic_envs_plugin.cc).
void register_synthetic_envs_globally();

// True for an id register_synthetic_envs adds.
bool is_synthetic_env(const std::string& env_id);

// The env plugin that registers the synthetic envs in another process (a benchmark's `rlx
// worker`): rlx-synthetic-envs.so beside worker_program (the rlx binary). Throws
// std::runtime_error naming the path and the target to build when it is not there.
std::string synthetic_envs_plugin_path(const std::string& worker_program);

}  // namespace rlx
