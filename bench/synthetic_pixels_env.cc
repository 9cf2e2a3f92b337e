#include "bench/synthetic_pixels_env.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace rlx {
namespace {

constexpr int kAgentSide = 2;
constexpr int kLastCorner = SyntheticPixelsEnv::kSide - kAgentSide;
constexpr uint8_t kAgentValue = 255;

// The kRingSize frame stacks, [ring, 84, 84, 4] (HWC): channel c of stack k is frame (k + c) mod
// kRingSize of a diagonal gradient moving a pixel a frame. Built once, shared by every instance.
const std::vector<uint8_t>& frame_ring() {
  static const std::vector<uint8_t> ring = [] {
    constexpr int side = SyntheticPixelsEnv::kSide, stack = SyntheticPixelsEnv::kStack;
    std::vector<uint8_t> stacks(static_cast<size_t>(SyntheticPixelsEnv::kRingSize * SyntheticPixelsEnv::kObservationBytes));
    size_t i = 0;
    for (int k = 0; k < SyntheticPixelsEnv::kRingSize; ++k) {
      for (int y = 0; y < side; ++y) {
        for (int x = 0; x < side; ++x) {
          for (int c = 0; c < stack; ++c) {
            const int frame = (k + c) % SyntheticPixelsEnv::kRingSize;
            stacks[i++] = static_cast<uint8_t>((3 * (x + frame) + 2 * y) % 255);  // 255 is the agent's alone
          }
        }
      }
    }
    return stacks;
  }();
  return ring;
}

}  // namespace

SyntheticPixelsEnv::SyntheticPixelsEnv() : Env(default_spec()) { frame_ring(); }

EnvSpec SyntheticPixelsEnv::default_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::box({kSide, kSide, kStack}, 0, 255, ScalarType::kUint8);
  spec.action_space = Space::discrete(kActions);
  spec.max_episode_steps = kEpisodeSteps;
  return spec;
}

void SyntheticPixelsEnv::reset_episode(Rng& rng, ObsSpan obs) {
  phase_ = static_cast<int>(rng.uniform_int(kRingSize));
  x_ = static_cast<int>(rng.uniform_int(kLastCorner + 1));
  y_ = static_cast<int>(rng.uniform_int(kLastCorner + 1));
  write(obs);
}

StepResult SyntheticPixelsEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.index < 0 || action.index >= kActions) {
    throw std::invalid_argument(std::string(kId) + " action must be in [0, " + std::to_string(kActions - 1) + "], got " +
                                std::to_string(action.index));
  }
  static constexpr int kDx[kActions] = {0, 0, 1, 0, -1, 0};
  static constexpr int kDy[kActions] = {0, -1, 0, 1, 0, 0};
  const auto a = static_cast<size_t>(action.index);
  x_ = std::min(std::max(x_ + kDx[a], 0), kLastCorner);
  y_ = std::min(std::max(y_ + kDy[a], 0), kLastCorner);
  const double reward = action.index == elapsed_steps() % kActions ? 1.0 : 0.0;
  phase_ = (phase_ + 1) % kRingSize;
  write(obs);
  return {reward, false, false};
}

void SyntheticPixelsEnv::write(ObsSpan obs) const {
  uint8_t* out = obs.bytes().data();
  std::memcpy(out, frame_ring().data() + static_cast<size_t>(phase_) * kObservationBytes, kObservationBytes);
  for (int dy = 0; dy < kAgentSide; ++dy) {
    std::memset(out + (static_cast<int64_t>(y_ + dy) * kSide + x_) * kStack, kAgentValue, kAgentSide * kStack);
  }
}

std::vector<double> SyntheticPixelsEnv::exact_state() const { return {double(phase_), double(x_), double(y_)}; }

void SyntheticPixelsEnv::restore_exact_state(const std::vector<double>& state) {
  const auto in_range = [](double v, int high) { return v >= 0 && v <= high && v == std::floor(v); };
  if (state.size() != 3 || !in_range(state[0], kRingSize - 1) || !in_range(state[1], kLastCorner) ||
      !in_range(state[2], kLastCorner)) {
    throw std::invalid_argument(std::string(kId) + ": an exact state is {phase in [0, " + std::to_string(kRingSize - 1) +
                                "], x and y in [0, " + std::to_string(kLastCorner) + "]}");
  }
  phase_ = static_cast<int>(state[0]);
  x_ = static_cast<int>(state[1]);
  y_ = static_cast<int>(state[2]);
}

void register_synthetic_envs(EnvRegistrar& registrar) {
  registrar.add(SyntheticPixelsEnv::default_spec(), [] { return std::make_unique<SyntheticPixelsEnv>(); });
}

}  // namespace rlx
