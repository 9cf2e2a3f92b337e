#include "envs/toy/illegal_moves.h"

#include <numeric>
#include <stdexcept>
#include <string>

namespace rlx {
namespace {

void paint(uint8_t* pixel, uint8_t r, uint8_t g, uint8_t b) {
  pixel[0] = r;
  pixel[1] = g;
  pixel[2] = b;
}

}  // namespace

IllegalMovesEnv::IllegalMovesEnv() : Env(default_spec()) {}

EnvSpec IllegalMovesEnv::default_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::box({kCells}, 0.0f, 1.0f);
  spec.action_space = Space::discrete(kCells);
  spec.action_mask = true;
  spec.max_episode_steps = kEpisodeSteps;
  spec.reward_threshold = kRewardThreshold;
  return spec;
}

void IllegalMovesEnv::deal(Rng& rng) {
  // How many cells are legal, then which (the first `legal` of a partial Fisher-Yates shuffle),
  // then every cell's value in cell order.
  const int legal = kMinLegal + static_cast<int>(rng.uniform_int(kMaxLegal - kMinLegal + 1));
  std::array<int, kCells> cells{};
  std::iota(cells.begin(), cells.end(), 0);
  for (int i = 0; i < legal; ++i) {
    const int j = i + static_cast<int>(rng.uniform_int(kCells - i));
    std::swap(cells[static_cast<size_t>(i)], cells[static_cast<size_t>(j)]);
  }
  legal_.fill(false);
  for (int i = 0; i < legal; ++i) legal_[static_cast<size_t>(cells[static_cast<size_t>(i)])] = true;
  for (int c = 0; c < kCells; ++c) {
    const double u = rng.uniform();
    values_[static_cast<size_t>(c)] = static_cast<float>(legal_[static_cast<size_t>(c)] ? u : kBaitLow + (1.0 - kBaitLow) * u);
  }
}

void IllegalMovesEnv::write_obs(ObsSpan obs) const {
  for (int c = 0; c < kCells; ++c) {
    obs[c] = values_[static_cast<size_t>(c)];
    obs.action_mask()[c] = legal_[static_cast<size_t>(c)] ? 1 : 0;
  }
}

void IllegalMovesEnv::reset_episode(Rng& rng, ObsSpan obs) {
  deal(rng);
  write_obs(obs);
}

StepResult IllegalMovesEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.index < 0 || action.index >= kCells) {
    throw std::invalid_argument(std::string(kId) + " action must be a cell in [0, " + std::to_string(kCells - 1) + "], got " +
                                std::to_string(action.index));
  }
  const auto cell = static_cast<size_t>(action.index);
  if (!legal_[cell]) {
    write_obs(obs);
    return {kIllegalReward, true, false};
  }
  const double reward = values_[cell];
  deal(rng());
  write_obs(obs);
  return {reward, false, false};
}

std::vector<double> IllegalMovesEnv::exact_state() const {
  std::vector<double> state(values_.begin(), values_.end());
  for (bool legal : legal_) state.push_back(legal ? 1.0 : 0.0);
  return state;
}

void IllegalMovesEnv::restore_exact_state(const std::vector<double>& state) {
  const std::string who = std::string(kId) + " exact state: ";
  if (state.size() != 2 * kCells) {
    throw std::invalid_argument(who + "expected " + std::to_string(2 * kCells) + " values (9 cell values, 9 legal flags), got " +
                                std::to_string(state.size()));
  }
  int legal = 0;
  for (int c = 0; c < kCells; ++c) {
    const double value = state[static_cast<size_t>(c)], flag = state[static_cast<size_t>(kCells + c)];
    if (!(value >= 0.0 && value <= 1.0)) throw std::invalid_argument(who + "cell " + std::to_string(c) + "'s value " + std::to_string(value) + " is outside [0, 1]");
    if (flag != 0.0 && flag != 1.0) throw std::invalid_argument(who + "cell " + std::to_string(c) + "'s legal flag is " + std::to_string(flag) + ", expected 0 or 1");
    legal += flag == 1.0;
  }
  if (legal < kMinLegal || legal > kMaxLegal) {
    throw std::invalid_argument(who + std::to_string(legal) + " legal cells, expected " + std::to_string(kMinLegal) + " to " + std::to_string(kMaxLegal));
  }
  for (int c = 0; c < kCells; ++c) {
    values_[static_cast<size_t>(c)] = static_cast<float>(state[static_cast<size_t>(c)]);
    legal_[static_cast<size_t>(c)] = state[static_cast<size_t>(kCells + c)] == 1.0;
  }
}

std::optional<RgbImage> IllegalMovesEnv::render_image() const {
  constexpr int kSide = 3 * kCellPixels;
  RgbImage image(kSide, kSide);
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) {
      uint8_t* p = image.pixel(x, y);
      const bool border = x % kCellPixels < 2 || y % kCellPixels < 2;
      const auto cell = static_cast<size_t>((y / kCellPixels) * 3 + x / kCellPixels);
      const auto shade = static_cast<uint8_t>(48 + 207 * values_[cell]);
      if (border) {
        paint(p, 24, 24, 24);
      } else if (legal_[cell]) {
        paint(p, 16, shade, 16);
      } else {
        paint(p, static_cast<uint8_t>(shade / 2), 8, 8);
      }
    }
  }
  return image;
}

}  // namespace rlx
