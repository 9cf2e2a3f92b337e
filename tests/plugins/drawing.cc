// A plugin whose envs draw themselves, for the video tests (tests/watch/record_command_test.cc):
//   PluginWalker-v0: a white square on black that moves one square right every step (whatever
//                    the action), 10 steps an episode, 10 frames a second;
//   BadFrame-v0:     the same walker, but render() returns one byte too few after the reset.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "envs/plugin.h"

namespace rlx_test_plugins {
namespace {

constexpr int kSteps = 10;
constexpr int kSquare = 16;  // pixels: the walker's side, and how far it moves a step

class WalkerEnv : public rlx::Env {
 public:
  explicit WalkerEnv(std::string id, bool bad_frame) : Env(spec_for(std::move(id))), bad_frame_(bad_frame) {}

  // Box(1) observation (the steps taken), Discrete(2) actions, reward = action, 10 steps.
  static rlx::EnvSpec spec_for(std::string id) {
    rlx::EnvSpec spec;
    spec.id = std::move(id);
    spec.observation_space = rlx::Space::box({1}, 0.0f, static_cast<float>(kSteps));
    spec.action_space = rlx::Space::discrete(2);
    spec.max_episode_steps = kSteps;
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override {
    position_ = 0;
    obs[0] = 0.0f;
  }
  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    obs[0] = static_cast<float>(++position_);
    rlx::StepResult result;
    result.reward = static_cast<double>(action.index);
    return result;
  }

  // (kSteps + 1) squares wide, 2 high: the walker's square at column `position_` of the top row.
  std::optional<rlx::RgbImage> render_image() const override {
    rlx::RgbImage image((kSteps + 1) * kSquare, 2 * kSquare);
    for (int y = 0; y < kSquare; ++y) {
      for (int x = position_ * kSquare; x < (position_ + 1) * kSquare; ++x) {
        uint8_t* pixel = image.pixel(x, y);
        pixel[0] = pixel[1] = pixel[2] = 255;
      }
    }
    if (bad_frame_) image.rgb.pop_back();
    return image;
  }
  double frames_per_second() const override { return 10; }

 private:
  bool bad_frame_;
  int position_ = 0;
};

}  // namespace
}  // namespace rlx_test_plugins

RLX_ENV_PLUGIN(registrar) {
  using rlx_test_plugins::WalkerEnv;
  registrar.add(WalkerEnv::spec_for("PluginWalker-v0"), [] { return std::make_unique<WalkerEnv>("PluginWalker-v0", false); });
  registrar.add(WalkerEnv::spec_for("BadFrame-v0"), [] { return std::make_unique<WalkerEnv>("BadFrame-v0", true); });
}
