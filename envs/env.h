// The environment API: Gymnasium semantics over caller-owned buffers, no allocation per step.
// This header (with core/space.h, core/env_spec.h, core/rng.h) is all a plugin needs.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env_spec.h"
#include "core/rng.h"

namespace rlx {

// One action: `index` for Discrete spaces, `values` (action_space.size() floats) for Box.
struct Action {
  int64_t index = 0;
  const float* values = nullptr;
};

// What one step returns besides the observation.
struct StepResult {
  double reward = 0.0;
  bool terminated = false;  // the MDP reached a terminal state: do not bootstrap
  bool truncated = false;   // cut by the time limit (or the env): bootstrap from the observation
};

// Base class of every environment. Public calls are non-virtual so the time limit and
// seeding behave the same everywhere; subclasses implement reset_episode and step_episode.
class Env {
 public:
  explicit Env(EnvSpec spec) : spec_(std::move(spec)) {}
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // The env's static description.
  const EnvSpec& spec() const { return spec_; }

  // Starts an episode and writes the first observation into obs (observation_space.size()
  // floats). A seed restarts the env's generator; without one the stream continues (an env
  // never seeded is seeded from std::random_device, as Gymnasium does).
  void reset(std::optional<uint64_t> seed, float* obs) {
    if (seed) {
      rng_.seed_with(*seed);
      seeded_ = true;
    } else if (!seeded_) {
      std::random_device device;
      rng_.seed_with((static_cast<uint64_t>(device()) << 32) ^ device());
      seeded_ = true;
    }
    elapsed_steps_ = 0;
    reset_episode(rng_, obs);
  }

  // Advances one step and writes the next observation into obs. Sets truncated when the
  // spec's time limit is reached (a termination on the same step wins, as in Gymnasium).
  StepResult step(const Action& action, float* obs) {
    StepResult result = step_episode(action, obs);
    ++elapsed_steps_;
    if (spec_.max_episode_steps > 0 && elapsed_steps_ >= spec_.max_episode_steps) result.truncated = true;
    return result;
  }

  // Steps taken since the last reset.
  int elapsed_steps() const { return elapsed_steps_; }

  // The physical state vector (e.g. CartPole's x, x_dot, theta, theta_dot); empty when the
  // env does not expose one.
  virtual std::vector<double> state() const { return {}; }

  // Overwrites the physical state and writes the matching observation into obs. Throws
  // std::invalid_argument on a wrong size, std::logic_error when unsupported.
  virtual void set_state(const std::vector<double>& state, float* obs) {
    (void)state;
    (void)obs;
    throw std::logic_error(spec_.id + " does not support setting its state");
  }

 protected:
  // Draws the initial state from rng and writes the first observation.
  virtual void reset_episode(Rng& rng, float* obs) = 0;
  // Applies the action and writes the next observation; the time limit is added by step().
  virtual StepResult step_episode(const Action& action, float* obs) = 0;

  // The episode generator, for envs that draw noise during steps.
  Rng& rng() { return rng_; }

 private:
  EnvSpec spec_;
  Rng rng_;
  bool seeded_ = false;
  int elapsed_steps_ = 0;
};

}  // namespace rlx
