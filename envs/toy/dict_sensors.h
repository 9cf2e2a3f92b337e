// Toy/DictSensors-v0: a Dict observation and a MultiDiscrete action, where every key matters.
//
// Observation Dict('goal': Discrete(4), 'grid': Box(0, 1, (3, 3, 1), uint8), 'position':
// Box(-1, 1, (2,), float32)) (keys in sorted order, so a Gymnasium Dict of a plain dict has the
// same order); action MultiDiscrete([4 3]). Each step draws a fresh observation: a goal, a grid with
// exactly one full row (the lit row; the other rows have at most two cells on), and a position
// uniform in [-1, 1)^2. The step pays +1 when action[0] == goal and +1 when action[1] == target =
// (lit row + number of positive coordinates of position) mod 3, so reaching the optimal return
// (16 over 8 steps) needs all three keys: ignoring the goal caps it at 10, the grid at 10.67, the
// position at 12 (expected). An episode is 8 steps, cut by the time limit (truncated).
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "envs/env.h"

namespace rlx {

class DictSensorsEnv final : public Env {
 public:
  static constexpr const char* kId = "Toy/DictSensors-v0";
  static constexpr int kGoals = 4;     // goal: Discrete(kGoals); action[0] has as many values
  static constexpr int kRows = 3;      // the grid is kRows x kRows x 1; action[1] has kRows values
  static constexpr int kEpisodeSteps = 8;
  static constexpr double kRewardThreshold = 15.0;  // the optimal return is 16
  static constexpr int kCellPixels = 32;  // render(): one square per grid cell
  static constexpr double kFramesPerSecond = 4;

  DictSensorsEnv();

  // The registered spec: the Dict above, MultiDiscrete([4 3]), 8 steps, threshold 15.
  static EnvSpec default_spec();

  // What action[1] must be for the current observation: (lit row + positive coordinates) mod 3.
  int target() const;
  // The current goal (what action[0] must be).
  int goal() const { return goal_; }
  // The current lit row (the one full row of the grid).
  int lit_row() const;
  // The current position.
  const std::array<float, 2>& position() const { return position_; }

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  // Pays +1 for each right element and draws the next observation. Throws std::invalid_argument
  // when the action has no indices or an element lies outside its values.
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  // goal, x, y, then the 9 grid cells (row-major).
  std::vector<double> exact_state() const override;
  // Restores exact_state()'s vector; throws std::invalid_argument naming what is wrong (size, a
  // value outside its space, a grid without exactly one full row).
  void restore_exact_state(const std::vector<double>& state) override;
  // 192 x 96 pixels: the grid on the left, the position as a dot coloured by the goal on the right.
  std::optional<RgbImage> render_image() const override;
  double frames_per_second() const override { return kFramesPerSecond; }

 private:
  void draw(Rng& rng);
  void write_obs(ObsSpan obs) const;

  int goal_ = 0;
  std::array<float, 2> position_{};
  std::array<uint8_t, kRows * kRows> grid_{};  // row-major, 0 or 1
};

}  // namespace rlx
