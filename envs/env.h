// The environment API: Gymnasium semantics over caller-owned buffers, no allocation per step.
// This header (with core/space.h, core/env_spec.h, core/observation_layout.h, core/rng.h,
// core/rgb_image.h) is all a plugin needs.
//
// An observation of any space is stored in two parts (core/observation_layout.h): floats (float32
// Boxes, Discrete and MultiDiscrete values) and bytes (uint8 Boxes, MultiBinary, then the action
// mask when the spec declares one). An env writes them through an ObsSpan: obs[i] and obs.data()
// are the floats, obs.bytes() the bytes, obs.action_mask() the mask.
//
// The contract is checked where it cannot cost a plugin author a debugging session: an env
// writes its observation, index-checked, into buffers of the Env's own with guard zones behind
// them; after every reset and step the Env verifies that nothing reached the slots right behind
// either part, that every float was written and is finite, that Discrete values, MultiBinary bits
// and bounded uint8 elements lie in their space, that the mask allows an action, and that the
// reward is finite, and only then copies the observation out. A breach throws EnvOutputError
// naming the env, the call, the step and the element.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env_spec.h"
#include "core/observation_layout.h"
#include "core/rgb_image.h"
#include "core/rng.h"
#include "envs/observation_writer.h"

namespace rlx {

// One action: `index` for Discrete spaces (a value of the space: start .. start + n - 1),
// `values` (action_space.size() floats) for Box, `indices` (action_space.size() values of the
// space, each element's start included) for MultiDiscrete and MultiBinary.
struct Action {
  int64_t index = 0;
  const float* values = nullptr;
  const int64_t* indices = nullptr;
};

// Restarts rng from seed; without one, the stream continues, seeded from std::random_device the
// first time (as Gymnasium). Sets seeded. What every env's reset does with its generator.
inline void seed_episode_generator(std::optional<uint64_t> seed, Rng& rng, bool& seeded) {
  if (seed) {
    rng.seed_with(*seed);
    seeded = true;
  } else if (!seeded) {
    std::random_device device;
    rng.seed_with((static_cast<uint64_t>(device()) << 32) ^ device());
    seeded = true;
  }
}

// What one step returns besides the observation.
struct StepResult {
  double reward = 0.0;
  bool terminated = false;  // the MDP reached a terminal state: do not bootstrap
  bool truncated = false;   // cut by the time limit (or the env): bootstrap from the observation
};

// An env broke the API's contract (wrote past its observation, left an element unwritten,
// produced a non-finite value, or an instance's spec differs from its registration). A user's
// (or plugin author's) error: `rlx` exits with status 2.
class EnvContractError : public std::runtime_error {
 public:
  // message should start with the env id.
  EnvContractError(std::string env_id, const std::string& message)
      : std::runtime_error(message), env_id_(std::move(env_id)) {}
  const std::string& env_id() const { return env_id_; }

 private:
  std::string env_id_;
};

// A bad value or size in what one call of an env returned: names the call, the episode step and
// the field.
class EnvOutputError : public EnvContractError {
 public:
  EnvOutputError(const std::string& env_id, std::string call, int64_t step, std::string field, const std::string& what)
      : EnvContractError(env_id, env_id + ": " + call + " (episode step " + std::to_string(step) + "): " + field + " " + what),
        call_(std::move(call)),
        step_(step),
        field_(std::move(field)) {}
  // The same error, its message prefixed with where it happened (e.g. "worker 2, env 3").
  EnvOutputError(const EnvOutputError& error, const std::string& where)
      : EnvContractError(error.env_id(), where + ": " + error.what()),
        call_(error.call_),
        step_(error.step_),
        field_(error.field_) {}

  const std::string& call() const { return call_; }    // "reset", "step", "set_state", "render" or "render_fps"
  int64_t step() const { return step_; }               // steps of the episode when it happened (0: reset)
  const std::string& field() const { return field_; }  // e.g. "observation[2]", "reward" or "image"

 private:
  std::string call_;
  int64_t step_;
  std::string field_;
};

// A non-finite observation element or reward: the one EnvOutputError a run may be configured to
// survive (drop_nonfinite_episodes).
class NonFiniteEnvOutput : public EnvOutputError {
 public:
  using EnvOutputError::EnvOutputError;
};


// An env's whole dynamic state, for an exact resume: its generator, its step counter and the
// env's own exact_state().
struct EnvSnapshot {
  Rng::State rng;
  bool seeded = false;
  int elapsed_steps = 0;
  std::vector<double> exact_state;
};

// Base class of every environment. Public calls are non-virtual so the time limit, seeding and
// the contract checks behave the same everywhere; subclasses implement reset_episode and
// step_episode (and optionally the state hooks).
class Env {
 public:
  explicit Env(EnvSpec spec) : spec_(std::move(spec)), writer_(spec_) {}
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // The env's static description.
  const EnvSpec& spec() const { return spec_; }

  // The storage of one observation: its floats, its bytes and the action mask's place.
  const ObservationLayout& observation_layout() const { return writer_.layout(); }

  // Starts an episode and writes the first observation into obs (observation_layout()'s floats
  // and bytes; a float* will do when there are no bytes). A seed restarts the env's generator; without one the stream continues (an env
  // never seeded is seeded from std::random_device, as Gymnasium does). Throws EnvContractError
  // (EnvOutputError) when the env breaks the contract; obs is then left untouched.
  void reset(std::optional<uint64_t> seed, const ObsRow& obs) {
    reset_seed_ = seed;
    seed_episode_generator(seed, rng_, seeded_);
    elapsed_steps_ = 0;
    try {
      reset_episode(rng_, begin_write());
    } catch (const ObsIndexError& error) {
      throw out_of_bounds("reset", error);
    }
    finish_write("reset", 0.0, obs);
  }

  // Advances one step and writes the next observation into obs. Sets truncated when the
  // spec's time limit is reached (a termination on the same step wins, as in Gymnasium).
  // Throws EnvOutputError (NonFiniteEnvOutput for NaN/inf) with obs left untouched.
  StepResult step(const Action& action, const ObsRow& obs) {
    StepResult result;
    try {
      result = step_episode(action, begin_write());
    } catch (const ObsIndexError& error) {
      ++elapsed_steps_;
      throw out_of_bounds("step", error);
    }
    ++elapsed_steps_;
    if (spec_.max_episode_steps > 0 && elapsed_steps_ >= spec_.max_episode_steps) result.truncated = true;
    finish_write("step", result.reward, obs);
    return result;
  }

  // Steps taken since the last reset.
  int elapsed_steps() const { return elapsed_steps_; }

  // The physical state vector (e.g. CartPole's x, x_dot, theta, theta_dot); empty when the
  // env does not expose one.
  virtual std::vector<double> state() const { return {}; }

  // Overwrites the physical state and writes the matching observation into obs. Throws
  // std::invalid_argument on a wrong size, std::logic_error when unsupported, EnvOutputError
  // like step().
  void set_state(const std::vector<double>& state, const ObsRow& obs) {
    try {
      set_physical_state(state, begin_write());
    } catch (const ObsIndexError& error) {
      throw out_of_bounds("set_state", error);
    }
    finish_write("set_state", 0.0, obs);
  }

  // The whole dynamic state for an exact resume; nullopt when the env does not support it
  // (exact_state() is empty).
  std::optional<EnvSnapshot> snapshot() const {
    EnvSnapshot snapshot{rng_.state(), seeded_, elapsed_steps_, exact_state()};
    if (snapshot.exact_state.empty()) return std::nullopt;
    return snapshot;
  }
  // Restores a snapshot() of an env of the same id; throws std::invalid_argument when the env
  // refuses its exact_state.
  void restore(const EnvSnapshot& snapshot) {
    restore_exact_state(snapshot.exact_state);
    rng_.set_state(snapshot.rng);
    seeded_ = snapshot.seeded;
    elapsed_steps_ = snapshot.elapsed_steps;
  }

  // The largest width or height, in pixels, of an image render() returns.
  static constexpr int kMaxRenderSide = 8192;
  // render_fps() of an env that states no frame rate of its own.
  static constexpr double kDefaultRenderFps = 30;
  // The highest frame rate render_fps() may give.
  static constexpr double kMaxRenderFps = 1000;

  // A picture of the env's current state, for videos (rlx evaluate --record, record_video_every);
  // nullopt when the env draws none (the default). Throws EnvOutputError naming the env when the
  // image is malformed: a width or height outside [1, kMaxRenderSide], or rgb not width * height
  // * 3 bytes. Built-in envs are drawn by rlx's own renderers (watch/) and draw nothing here.
  std::optional<RgbImage> render() const {
    std::optional<RgbImage> image = render_image();
    if (image) check_image(*image);
    return image;
  }

  // The frame rate a video of this env plays at in real time (Gymnasium's
  // metadata["render_fps"]: 1 / the time one step covers); kDefaultRenderFps unless the env says.
  // Throws EnvOutputError when the env's rate is outside (0, kMaxRenderFps].
  double render_fps() const {
    const double fps = frames_per_second();
    if (!(fps > 0 && fps <= kMaxRenderFps)) {
      throw EnvOutputError(spec_.id, "render_fps", elapsed_steps_, "frames per second",
                           "is " + std::to_string(fps) + ", expected a rate in (0, " +
                               std::to_string(static_cast<int>(kMaxRenderFps)) + "]");
    }
    return fps;
  }

 protected:
  // Draws the initial state from rng and writes the first observation.
  virtual void reset_episode(Rng& rng, ObsSpan obs) = 0;
  // Applies the action and writes the next observation; the time limit is added by step().
  virtual StepResult step_episode(const Action& action, ObsSpan obs) = 0;
  // set_state's hook: overwrite the physical state, write the observation.
  virtual void set_physical_state(const std::vector<double>& state, ObsSpan obs) {
    (void)state;
    (void)obs;
    throw std::logic_error(spec_.id + " does not support setting its state");
  }
  // Everything the env's future depends on besides its generator and step counter, as doubles;
  // empty (the default) when the env cannot be restored exactly.
  virtual std::vector<double> exact_state() const { return {}; }
  // Restores exact_state()'s vector; throws std::invalid_argument on a wrong size.
  virtual void restore_exact_state(const std::vector<double>& state) {
    (void)state;
    throw std::logic_error(spec_.id + " does not support exact snapshots");
  }

  // render()'s hook: draws the current state (any size up to kMaxRenderSide, the same size every
  // call), or returns nullopt (the default) when the env draws no pictures. Must not change the
  // env's state.
  virtual std::optional<RgbImage> render_image() const { return std::nullopt; }
  // render_fps()'s hook: the env's frame rate, e.g. 1 / the seconds one step covers.
  virtual double frames_per_second() const { return kDefaultRenderFps; }

  // The episode generator, for envs that draw noise during steps.
  Rng& rng() { return rng_; }
  // The seed the reset under way was given (nullopt when none), for envs that seed a generator
  // of their own (a Python env's reset(seed=...)); meaningful inside reset_episode only.
  std::optional<uint64_t> reset_seed() const { return reset_seed_; }

 private:
  // Hands the hook the observation's buffers (the floats marked unwritten).
  ObsSpan begin_write() { return writer_.begin(); }

  EnvOutputError out_of_bounds(const char* call, const ObsIndexError& error) const {
    return EnvOutputError(spec_.id, call, elapsed_steps_, writer_.index_field(error.part(), error.index()),
                          "is outside " + writer_.index_bound(error.part(), error.size()) + writer_.space_text());
  }

  // Throws the EnvOutputError of a malformed render_image().
  void check_image(const RgbImage& image) const {
    const std::string size = std::to_string(image.width) + " x " + std::to_string(image.height);
    if (image.width < 1 || image.height < 1 || image.width > kMaxRenderSide || image.height > kMaxRenderSide) {
      throw EnvOutputError(spec_.id, "render", elapsed_steps_, "image",
                           "is " + size + " pixels, expected a width and height in [1, " +
                               std::to_string(kMaxRenderSide) + "]");
    }
    const size_t expected = static_cast<size_t>(image.width) * static_cast<size_t>(image.height) * 3;
    if (image.rgb.size() != expected) {
      throw EnvOutputError(spec_.id, "render", elapsed_steps_, "image",
                           "has " + std::to_string(image.rgb.size()) + " bytes of RGB, expected width * height * 3 = " +
                               std::to_string(expected) + " (" + size + " pixels)");
    }
  }

  // Checks what the hook wrote and copies it to obs; throws the EnvOutputError (NonFiniteEnvOutput
  // for NaN or inf) naming the first breach, with obs untouched.
  void finish_write(const char* call, double reward, const ObsRow& obs) {
    if (__builtin_expect(writer_.finish(reward, obs), 1)) return;
    throw_breach(call, reward);
  }

  [[noreturn]] __attribute__((noinline, cold)) void throw_breach(const char* call, double reward) const {
    const ObservationBreach breach = writer_.breach(reward);
    if (breach.non_finite) throw NonFiniteEnvOutput(spec_.id, call, elapsed_steps_, breach.field, breach.what);
    throw EnvOutputError(spec_.id, call, elapsed_steps_, breach.field, breach.what);
  }

  EnvSpec spec_;
  Rng rng_;
  bool seeded_ = false;
  std::optional<uint64_t> reset_seed_;
  int elapsed_steps_ = 0;
  ObservationWriter writer_;
};

}  // namespace rlx
