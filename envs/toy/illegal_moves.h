// Toy/IllegalMoves-v0: a masked Discrete env in the spirit of a board game with illegal moves.
//
// A board of 9 cells, each showing a value in [0, 1]. Each step a random 2 to 6 of the cells are
// legal; the action mask (EnvSpec::action_mask) says which. The illegal cells are bait: their
// values are drawn from [0.5, 1), the legal ones' from [0, 1), so the highest value on the board
// is most often an illegal cell, and the observation alone does not say which cells are legal. A
// legal move pays its cell's value and deals a new board; an illegal one pays -10 and terminates
// the episode. An episode lasts at most 10 moves, cut by the time limit (truncated: the boards are
// independent draws, so there is no last move to plan for and nothing in the observation counts
// the moves). The optimal policy takes the highest-valued legal cell.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "envs/env.h"

namespace rlx {

class IllegalMovesEnv final : public Env {
 public:
  static constexpr const char* kId = "Toy/IllegalMoves-v0";
  static constexpr int kCells = 9;           // a 3 x 3 board, cell i at row i / 3, column i % 3
  static constexpr int kMinLegal = 2;        // legal cells per board: uniform in [kMinLegal, kMaxLegal]
  static constexpr int kMaxLegal = 6;
  static constexpr float kBaitLow = 0.5f;    // illegal cells' values: uniform in [kBaitLow, 1)
  static constexpr double kIllegalReward = -10.0;
  static constexpr int kEpisodeSteps = 10;   // the time limit
  static constexpr double kRewardThreshold = 7.5;  // the optimal policy's mean return is 7.81
  static constexpr int kCellPixels = 32;     // render(): one square per cell
  static constexpr double kFramesPerSecond = 4;

  IllegalMovesEnv();

  // The registered spec: Box(0, 1, (9,), float32), Discrete(9) masked, 10 steps, threshold 7.5.
  static EnvSpec default_spec();

  // The current board's cell values (what the observation shows).
  const std::array<float, kCells>& values() const { return values_; }
  // Whether each cell of the current board is legal (what the action mask says).
  const std::array<bool, kCells>& legal() const { return legal_; }

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  // A legal cell pays its value and deals a new board; an illegal one pays -10, terminates and
  // leaves the board. Throws std::invalid_argument for an index outside [0, 9).
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  // The board: 9 values, then 9 legal flags (0 or 1).
  std::vector<double> exact_state() const override;
  // Restores exact_state()'s board; throws std::invalid_argument naming what is wrong (size,
  // a value outside [0, 1], a flag not 0 or 1, legal cells outside [2, 6]).
  void restore_exact_state(const std::vector<double>& state) override;
  // 96 x 96 pixels: legal cells green, brighter for higher values; illegal cells dark red.
  std::optional<RgbImage> render_image() const override;
  double frames_per_second() const override { return kFramesPerSecond; }

 private:
  void deal(Rng& rng);
  void write_obs(ObsSpan obs) const;

  std::array<float, kCells> values_{};
  std::array<bool, kCells> legal_{};
};

}  // namespace rlx
