// Frame stacking (the frame_stack config key): an env whose observation is its inner env's last N
// observations, as SB3's VecFrameStack and Gymnasium's FrameStackObservation give them.
//
// The observation space must be a Box. An image (H, W, C) stacks on its channel axis to
// (H, W, C * N), channels last with the oldest frame first (SB3's VecFrameStack on channels-last
// images); a vector (D,) becomes (N * D,), the oldest frame first. Every element keeps its dtype
// and bounds (uint8 stays uint8, and travels as bytes). At reset the stack is filled with the reset
// observation (Gymnasium's padding "reset"); each step drops the oldest frame. An action mask
// passes through unchanged: the newest frame's.
#pragma once

#include <memory>
#include <vector>

#include "envs/registry.h"

namespace rlx {

// The most frames a stack may hold (the frame_stack key's and a Welcome's bound).
constexpr int kMaxFrameStack = 64;

// The spec of `spec`'s env with its observations stacked over `frames` steps: spec itself when
// frames is 1. Throws ConfigError naming the env and its space when frames > 1 and the
// observation space is not a Box of rank 1 or 3, or frames lies outside [1, kMaxFrameStack].
EnvSpec frame_stacked_spec(const EnvSpec& spec, int frames);

// Makes `factory`'s envs with their observations stacked over `frames` steps (FrameStackEnv);
// `factory` itself when frames is 1. The returned factory throws like frame_stacked_spec.
EnvFactory frame_stacked_factory(EnvFactory factory, int frames);

// The env a frame-stacked env wraps (for drawing it: its renderers read the inner env's exact
// state); `env` itself when it stacks nothing.
const Env& unstacked_env(const Env& env);

// An env observing its inner env's last `frames` observations (the header's comment tells how).
// Seeds, time limits, rewards, render() and state() are the inner env's; a snapshot holds the
// inner env's and the stack, so a run with stacked envs resumes exactly.
class FrameStackEnv : public Env {
 public:
  // Wraps inner; throws like frame_stacked_spec.
  FrameStackEnv(std::unique_ptr<Env> inner, int frames);

  // The wrapped env.
  const Env& inner() const { return *inner_; }
  // Frames in the stack (N).
  int frames() const { return frames_; }

  std::vector<double> state() const override { return inner_->state(); }

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  // Sets the inner env's state and restarts the stack from its observation, as a reset does.
  void set_physical_state(const std::vector<double>& state, ObsSpan obs) override;
  std::vector<double> exact_state() const override;
  void restore_exact_state(const std::vector<double>& state) override;
  std::optional<RgbImage> render_image() const override { return inner_->render(); }
  double frames_per_second() const override { return inner_->render_fps(); }

 private:
  // Fills every frame of the stack with the inner env's newest observation.
  void restart_stack();
  // Drops the oldest frame and appends the inner env's newest observation.
  void push_frame();
  // Writes the stack (oldest frame first) and the newest action mask into obs.
  void write_stack(ObsSpan& obs) const;

  std::unique_ptr<Env> inner_;
  int frames_;
  bool in_bytes_;                // the inner observation is a uint8 Box (stored in the bytes)
  int64_t frame_size_;           // elements of one inner observation
  int64_t channels_;             // elements per pixel: C for an image, D for a vector
  int64_t mask_size_;            // bytes of the action mask; 0 without one
  std::vector<float> inner_floats_;   // [inner float_slots] the inner env's newest observation
  std::vector<uint8_t> inner_bytes_;  // [inner byte_slots] its bytes, the mask last
  std::vector<float> float_frames_;   // [frames, frame_size] ring of float observations
  std::vector<uint8_t> byte_frames_;  // [frames, frame_size] ring of uint8 observations
  int oldest_ = 0;               // the ring's slot of the oldest frame
};

}  // namespace rlx
