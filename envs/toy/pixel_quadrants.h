// Toy/PixelQuadrants-v0: a Dict of an image and a Discrete, where the image must be read as one
// (the cnn encoder's convolutions over a Dict key, models/cnn_encoder.h) and the other key too.
//
// Observation Dict('image': Box(0, 1, (8, 8, 1), uint8), 'mirror': Discrete(2)); action
// Discrete(4). Each step draws a fresh observation: one lit pixel, uniform over the 64, and a mirror
// bit. The lit pixel's quadrant is q = 2 * (row >= 4) + (column >= 4); the step pays +1 when the
// action is q, or 3 - q when mirror is 1. An episode is 8 steps, cut by the time limit
// (truncated): the optimal return is 8, a policy blind to the mirror bit scores 4 (expected), one
// blind to the image 2.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "envs/env.h"

namespace rlx {

class PixelQuadrantsEnv final : public Env {
 public:
  static constexpr const char* kId = "Toy/PixelQuadrants-v0";
  static constexpr int kSide = 8;  // the image is kSide x kSide x 1
  static constexpr int kActions = 4;
  static constexpr int kEpisodeSteps = 8;
  static constexpr double kRewardThreshold = 7.5;  // the optimal return is 8
  static constexpr int kCellPixels = 16;           // render(): one square per image pixel
  static constexpr double kFramesPerSecond = 4;

  PixelQuadrantsEnv();

  // The registered spec: the Dict above, Discrete(4), 8 steps, threshold 7.5.
  static EnvSpec default_spec();

  // The action that pays for the current observation: the lit pixel's quadrant, mirrored (3 - q)
  // when the mirror bit is 1.
  int target() const;

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  // Pays +1 for the target action and draws the next observation. Throws std::invalid_argument
  // when the action is outside Discrete(4).
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  // The lit pixel's row and column, then the mirror bit.
  std::vector<double> exact_state() const override;
  // Restores exact_state()'s vector; throws std::invalid_argument naming the value that is wrong.
  void restore_exact_state(const std::vector<double>& state) override;
  // 128 x 128 pixels: the image, the lit pixel white, the background blue when mirrored.
  std::optional<RgbImage> render_image() const override;
  double frames_per_second() const override { return kFramesPerSecond; }

 private:
  void draw(Rng& rng);
  void write_obs(ObsSpan obs) const;

  int row_ = 0, column_ = 0, mirror_ = 0;
};

}  // namespace rlx
