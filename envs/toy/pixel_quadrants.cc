#include "envs/toy/pixel_quadrants.h"

#include <stdexcept>
#include <string>

namespace rlx {

PixelQuadrantsEnv::PixelQuadrantsEnv() : Env(default_spec()) {}

EnvSpec PixelQuadrantsEnv::default_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::dict({{"image", Space::box({kSide, kSide, 1}, 0.0f, 1.0f, ScalarType::kUint8)},
                                        {"mirror", Space::discrete(2)}});
  spec.action_space = Space::discrete(kActions);
  spec.max_episode_steps = kEpisodeSteps;
  spec.reward_threshold = kRewardThreshold;
  return spec;
}

int PixelQuadrantsEnv::target() const {
  const int quadrant = 2 * (row_ >= kSide / 2 ? 1 : 0) + (column_ >= kSide / 2 ? 1 : 0);
  return mirror_ == 1 ? kActions - 1 - quadrant : quadrant;
}

void PixelQuadrantsEnv::draw(Rng& rng) {
  row_ = static_cast<int>(rng.uniform_int(kSide));
  column_ = static_cast<int>(rng.uniform_int(kSide));
  mirror_ = static_cast<int>(rng.uniform_int(2));
}

void PixelQuadrantsEnv::write_obs(ObsSpan obs) const {
  // Floats: the mirror bit (Discrete); bytes: the image (core/observation_layout.h).
  obs[0] = static_cast<float>(mirror_);
  for (int i = 0; i < kSide * kSide; ++i) obs.bytes()[i] = i == row_ * kSide + column_ ? 1 : 0;
}

void PixelQuadrantsEnv::reset_episode(Rng& rng, ObsSpan obs) {
  draw(rng);
  write_obs(obs);
}

StepResult PixelQuadrantsEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.index < 0 || action.index >= kActions) {
    throw std::invalid_argument(std::string(kId) + " action must be in Discrete(4), got " + std::to_string(action.index));
  }
  const double reward = action.index == target() ? 1.0 : 0.0;
  draw(rng());
  write_obs(obs);
  return {reward, false, false};
}

std::vector<double> PixelQuadrantsEnv::exact_state() const {
  return {static_cast<double>(row_), static_cast<double>(column_), static_cast<double>(mirror_)};
}

void PixelQuadrantsEnv::restore_exact_state(const std::vector<double>& state) {
  const std::string who = std::string(kId) + " exact state: ";
  if (state.size() != 3) {
    throw std::invalid_argument(who + "expected 3 values (row, column, mirror), got " + std::to_string(state.size()));
  }
  const char* names[] = {"row", "column", "mirror"};
  const int limits[] = {kSide, kSide, 2};
  for (size_t i = 0; i < 3; ++i) {
    if (!(state[i] >= 0 && state[i] < limits[i] && state[i] == static_cast<int>(state[i]))) {
      throw std::invalid_argument(who + names[i] + " " + std::to_string(state[i]) + " is not an integer in [0, " +
                                  std::to_string(limits[i] - 1) + "]");
    }
  }
  row_ = static_cast<int>(state[0]);
  column_ = static_cast<int>(state[1]);
  mirror_ = static_cast<int>(state[2]);
}

std::optional<RgbImage> PixelQuadrantsEnv::render_image() const {
  constexpr int kPixels = kSide * kCellPixels;
  RgbImage image(kPixels, kPixels);
  for (int y = 0; y < kPixels; ++y) {
    for (int x = 0; x < kPixels; ++x) {
      uint8_t* p = image.pixel(x, y);
      const bool lit = y / kCellPixels == row_ && x / kCellPixels == column_;
      const bool axis = x == kPixels / 2 || y == kPixels / 2;
      const uint8_t shade = lit ? 240 : axis ? 90 : 30;
      p[0] = shade;
      p[1] = shade;
      p[2] = lit || axis ? shade : static_cast<uint8_t>(mirror_ == 1 ? 120 : 30);
    }
  }
  return image;
}

}  // namespace rlx
