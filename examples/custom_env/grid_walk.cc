// GridWalk-v0: a slippery 1-D corridor with a pit at the left end and a goal at the right.
//
// Cells 0 .. 9; the agent starts uniformly in cells 2 .. 6. Action 0 moves left, 1 right;
// with probability 0.1 the floor is slippery and the agent moves the other way. Reaching
// cell 9 pays +1 and ends the episode, falling into cell 0 pays -1 and ends it, every other
// step costs 0.01. The observation is a one-hot vector of the agent's cell; the time limit
// is 50 steps. state() is {cell}. render() draws the corridor (rlx evaluate --record films it).
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/plugin.h"

namespace custom_env {
namespace {

constexpr int kCells = 10;
constexpr int kPit = 0;
constexpr int kGoal = kCells - 1;
constexpr int kStartLow = 2;
constexpr int kStartHigh = 6;
constexpr double kSlipProbability = 0.1;
constexpr double kStepCost = 0.01;
constexpr int kTimeLimit = 50;

// The picture: one square of kCellPixels per cell, the agent a disc in its cell.
constexpr int kCellPixels = 40;
constexpr int kCellGap = 4;  // background between the squares
constexpr int kAgentRadius = 13;
constexpr double kFramesPerSecond = 5;  // slow enough to follow each step

struct Colour {
  uint8_t r, g, b;
};
constexpr Colour kBackground{40, 44, 52};
constexpr Colour kFloor{200, 200, 200};
constexpr Colour kPitColour{200, 40, 40};
constexpr Colour kGoalColour{40, 170, 70};
constexpr Colour kAgentColour{50, 100, 230};

void put(rlx::RgbImage& image, int x, int y, Colour colour) {
  uint8_t* pixel = image.pixel(x, y);
  pixel[0] = colour.r;
  pixel[1] = colour.g;
  pixel[2] = colour.b;
}

class GridWalkEnv : public rlx::Env {
 public:
  GridWalkEnv() : Env(default_spec()) {}

  // GridWalk-v0's spec: one-hot Box(10) observations, Discrete(2) actions, 50 steps.
  static rlx::EnvSpec default_spec() {
    rlx::EnvSpec spec;
    spec.id = "GridWalk-v0";
    spec.observation_space = rlx::Space::box({kCells}, 0.0f, 1.0f);
    spec.action_space = rlx::Space::discrete(2);
    spec.max_episode_steps = kTimeLimit;
    spec.reward_threshold = 0.9;
    return spec;
  }

  std::vector<double> state() const override { return {static_cast<double>(cell_)}; }

 protected:
  // The corridor as 10 squares left to right (the pit red, the goal green, the others grey) and
  // the agent as a blue disc on its cell: a 400 x 40 image.
  std::optional<rlx::RgbImage> render_image() const override {
    rlx::RgbImage image(kCells * kCellPixels, kCellPixels);
    for (int y = 0; y < image.height; ++y) {
      for (int x = 0; x < image.width; ++x) {
        const int cell = x / kCellPixels;
        const int cell_x = x % kCellPixels, cell_y = y;
        const bool in_square = cell_x >= kCellGap / 2 && cell_x < kCellPixels - kCellGap / 2 && cell_y >= kCellGap / 2 &&
                               cell_y < kCellPixels - kCellGap / 2;
        const int dx = cell_x - kCellPixels / 2, dy = cell_y - kCellPixels / 2;
        if (cell == cell_ && dx * dx + dy * dy <= kAgentRadius * kAgentRadius) {
          put(image, x, y, kAgentColour);
        } else if (in_square) {
          put(image, x, y, cell == kPit ? kPitColour : cell == kGoal ? kGoalColour : kFloor);
        } else {
          put(image, x, y, kBackground);
        }
      }
    }
    return image;
  }
  double frames_per_second() const override { return kFramesPerSecond; }

  // set_state: places the agent in a cell.
  void set_physical_state(const std::vector<double>& state, rlx::ObsSpan obs) override {
    if (state.size() != 1) {
      throw std::invalid_argument("GridWalk-v0 state needs 1 value, got " + std::to_string(state.size()));
    }
    const double cell = state[0];
    if (!(cell >= 0 && cell <= kGoal) || std::floor(cell) != cell) {
      throw std::invalid_argument("GridWalk-v0 state must be a cell 0.." + std::to_string(kGoal) + ", got " +
                                  std::to_string(cell));
    }
    cell_ = static_cast<int>(cell);
    write_obs(obs);
  }

  // The cell is the whole state, so rlx can snapshot the env for an exact resume.
  std::vector<double> exact_state() const override { return state(); }
  void restore_exact_state(const std::vector<double>& state) override { cell_ = static_cast<int>(state.at(0)); }

  void reset_episode(rlx::Rng& rng, rlx::ObsSpan obs) override {
    cell_ = kStartLow + static_cast<int>(rng.uniform_int(kStartHigh - kStartLow + 1));
    write_obs(obs);
  }

  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    if (action.index != 0 && action.index != 1) {
      throw std::invalid_argument("GridWalk-v0 action must be 0 or 1, got " + std::to_string(action.index));
    }
    rlx::StepResult result;
    if (cell_ == kPit || cell_ == kGoal) {  // stepping a finished episode: nothing moves
      write_obs(obs);
      result.terminated = true;
      return result;
    }
    int move = action.index == 1 ? 1 : -1;
    if (rng().uniform() < kSlipProbability) move = -move;
    cell_ += move;
    write_obs(obs);
    result.terminated = cell_ == kPit || cell_ == kGoal;
    result.reward = cell_ == kGoal ? 1.0 : cell_ == kPit ? -1.0 : -kStepCost;
    return result;
  }

 private:
  void write_obs(rlx::ObsSpan obs) const {
    for (int i = 0; i < kCells; ++i) obs[i] = i == cell_ ? 1.0f : 0.0f;
  }

  int cell_ = kStartLow;
};

}  // namespace
}  // namespace custom_env

RLX_ENV_PLUGIN(registrar) {
  registrar.add(custom_env::GridWalkEnv::default_spec(), [] { return std::make_unique<custom_env::GridWalkEnv>(); });
}
