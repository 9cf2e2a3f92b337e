#include "envs/toy/dict_sensors.h"

#include <stdexcept>
#include <string>

namespace rlx {
namespace {

// The full rows of a grid (bit r set: row r is all on).
int full_rows(const std::array<uint8_t, DictSensorsEnv::kRows * DictSensorsEnv::kRows>& grid) {
  int rows = 0;
  for (int r = 0; r < DictSensorsEnv::kRows; ++r) {
    bool full = true;
    for (int c = 0; c < DictSensorsEnv::kRows; ++c) full = full && grid[static_cast<size_t>(r * DictSensorsEnv::kRows + c)] != 0;
    if (full) rows |= 1 << r;
  }
  return rows;
}

void paint(uint8_t* pixel, uint8_t r, uint8_t g, uint8_t b) {
  pixel[0] = r;
  pixel[1] = g;
  pixel[2] = b;
}

}  // namespace

DictSensorsEnv::DictSensorsEnv() : Env(default_spec()) {}

EnvSpec DictSensorsEnv::default_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::dict({{"goal", Space::discrete(kGoals)},
                                        {"grid", Space::box({kRows, kRows, 1}, 0.0f, 1.0f, ScalarType::kUint8)},
                                        {"position", Space::box({2}, -1.0f, 1.0f)}});
  spec.action_space = Space::multi_discrete({kGoals, kRows});
  spec.max_episode_steps = kEpisodeSteps;
  spec.reward_threshold = kRewardThreshold;
  return spec;
}

int DictSensorsEnv::lit_row() const {
  const int rows = full_rows(grid_);
  for (int r = 0; r < kRows; ++r) {
    if (rows == 1 << r) return r;
  }
  throw std::logic_error(std::string(kId) + ": the grid has no single full row");
}

int DictSensorsEnv::target() const {
  const int positive = (position_[0] > 0.0f ? 1 : 0) + (position_[1] > 0.0f ? 1 : 0);
  return (lit_row() + positive) % kRows;
}

void DictSensorsEnv::draw(Rng& rng) {
  // The goal, the position, the lit row, then the other cells (on with chance 1/2; a row drawn
  // full loses one random cell, so the lit row stays the only full one).
  goal_ = static_cast<int>(rng.uniform_int(kGoals));
  for (float& p : position_) p = static_cast<float>(rng.uniform(-1.0, 1.0));
  const int lit = static_cast<int>(rng.uniform_int(kRows));
  for (int r = 0; r < kRows; ++r) {
    int on = 0;
    for (int c = 0; c < kRows; ++c) {
      const bool cell = r == lit || rng.uniform() < 0.5;
      grid_[static_cast<size_t>(r * kRows + c)] = cell ? 1 : 0;
      on += cell;
    }
    if (r != lit && on == kRows) grid_[static_cast<size_t>(r * kRows + rng.uniform_int(kRows))] = 0;
  }
}

void DictSensorsEnv::write_obs(ObsSpan obs) const {
  // Floats: goal, then position; bytes: the grid (core/observation_layout.h).
  obs[0] = static_cast<float>(goal_);
  obs[1] = position_[0];
  obs[2] = position_[1];
  for (int i = 0; i < kRows * kRows; ++i) obs.bytes()[i] = grid_[static_cast<size_t>(i)];
}

void DictSensorsEnv::reset_episode(Rng& rng, ObsSpan obs) {
  draw(rng);
  write_obs(obs);
}

StepResult DictSensorsEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.indices == nullptr) throw std::invalid_argument(std::string(kId) + " takes MultiDiscrete([4 3]) actions: Action::indices is null");
  const int64_t pick = action.indices[0], row = action.indices[1];
  if (pick < 0 || pick >= kGoals || row < 0 || row >= kRows) {
    throw std::invalid_argument(std::string(kId) + " action must be in MultiDiscrete([4 3]), got [" + std::to_string(pick) + " " +
                                std::to_string(row) + "]");
  }
  const double reward = (pick == goal_ ? 1.0 : 0.0) + (row == target() ? 1.0 : 0.0);
  draw(rng());
  write_obs(obs);
  return {reward, false, false};
}

std::vector<double> DictSensorsEnv::exact_state() const {
  std::vector<double> state{static_cast<double>(goal_), position_[0], position_[1]};
  for (uint8_t cell : grid_) state.push_back(cell);
  return state;
}

void DictSensorsEnv::restore_exact_state(const std::vector<double>& state) {
  const std::string who = std::string(kId) + " exact state: ";
  constexpr size_t kSize = 3 + kRows * kRows;
  if (state.size() != kSize) {
    throw std::invalid_argument(who + "expected " + std::to_string(kSize) + " values (goal, x, y, 9 grid cells), got " + std::to_string(state.size()));
  }
  const double goal = state[0];
  if (!(goal >= 0 && goal < kGoals && goal == static_cast<int>(goal))) throw std::invalid_argument(who + "goal " + std::to_string(goal) + " is not in [0, 3]");
  for (size_t i = 1; i < 3; ++i) {
    if (!(state[i] >= -1.0 && state[i] <= 1.0)) throw std::invalid_argument(who + "position " + std::to_string(state[i]) + " is outside [-1, 1]");
  }
  std::array<uint8_t, kRows * kRows> grid{};
  for (size_t i = 0; i < grid.size(); ++i) {
    const double cell = state[3 + i];
    if (cell != 0.0 && cell != 1.0) throw std::invalid_argument(who + "grid cell " + std::to_string(i) + " is " + std::to_string(cell) + ", expected 0 or 1");
    grid[i] = static_cast<uint8_t>(cell);
  }
  const int rows = full_rows(grid);
  if (rows == 0 || (rows & (rows - 1)) != 0) throw std::invalid_argument(who + "the grid needs exactly one full row");
  goal_ = static_cast<int>(goal);
  position_ = {static_cast<float>(state[1]), static_cast<float>(state[2])};
  grid_ = grid;
}

std::optional<RgbImage> DictSensorsEnv::render_image() const {
  constexpr int kSide = kRows * kCellPixels;
  // One colour per goal: red, green, blue, yellow.
  constexpr uint8_t kGoalColours[kGoals][3] = {{230, 60, 60}, {60, 200, 60}, {70, 110, 240}, {230, 200, 40}};
  const uint8_t* colour = kGoalColours[goal_];
  RgbImage image(2 * kSide, kSide);
  const float dot_x = kSide + (position_[0] + 1.0f) * 0.5f * (kSide - 1);
  const float dot_y = (1.0f - position_[1]) * 0.5f * (kSide - 1);  // y up
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < 2 * kSide; ++x) {
      uint8_t* p = image.pixel(x, y);
      if (x < kSide) {
        const bool border = x % kCellPixels < 2 || y % kCellPixels < 2;
        const bool on = grid_[static_cast<size_t>((y / kCellPixels) * kRows + x / kCellPixels)] != 0;
        if (border) {
          paint(p, 24, 24, 24);
        } else if (on) {
          paint(p, 235, 235, 235);
        } else {
          paint(p, 60, 60, 60);
        }
        continue;
      }
      const float dx = static_cast<float>(x) - dot_x, dy = static_cast<float>(y) - dot_y;
      if (dx * dx + dy * dy <= 36.0f) {
        paint(p, colour[0], colour[1], colour[2]);
      } else if (x == kSide + kSide / 2 || y == kSide / 2) {
        paint(p, 90, 90, 90);  // the axes: the sign of each coordinate
      } else {
        paint(p, 16, 16, 16);
      }
    }
  }
  return image;
}

}  // namespace rlx
