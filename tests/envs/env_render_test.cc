// Env::render's contract: an env draws nothing unless it overrides render_image(); what it draws
// comes back as drawn when well formed, and a malformed image or frame rate is an EnvOutputError
// naming the env, the call and what was expected.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/env.h"

namespace {

rlx::EnvSpec picture_spec() {
  rlx::EnvSpec spec;
  spec.id = "Picture-v0";
  spec.observation_space = rlx::Space::box({1}, 0.0f, 1.0f);
  spec.action_space = rlx::Space::discrete(2);
  return spec;
}

// Draws `image` (nullopt: nothing) at `fps`; obs is always 0.
class PictureEnv : public rlx::Env {
 public:
  PictureEnv(std::optional<rlx::RgbImage> image, double fps) : Env(picture_spec()), image_(std::move(image)), fps_(fps) {}

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override { obs[0] = 0.0f; }
  rlx::StepResult step_episode(const rlx::Action&, rlx::ObsSpan obs) override {
    obs[0] = 0.0f;
    return {};
  }
  std::optional<rlx::RgbImage> render_image() const override { return image_; }
  double frames_per_second() const override { return fps_; }

 private:
  std::optional<rlx::RgbImage> image_;
  double fps_;
};

// An env that overrides nothing about pictures.
class PlainEnv : public rlx::Env {
 public:
  PlainEnv() : Env(picture_spec()) {}

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override { obs[0] = 0.0f; }
  rlx::StepResult step_episode(const rlx::Action&, rlx::ObsSpan obs) override {
    obs[0] = 0.0f;
    return {};
  }
};

// The env after a reset and two steps.
std::unique_ptr<rlx::Env> after_two_steps(std::unique_ptr<rlx::Env> env) {
  std::vector<float> obs(1);
  env->reset(1, obs.data());
  const rlx::Action action;
  env->step(action, obs.data());
  env->step(action, obs.data());
  return env;
}

std::unique_ptr<rlx::Env> drawing(rlx::RgbImage image, double fps = 30) {
  return after_two_steps(std::make_unique<PictureEnv>(std::move(image), fps));
}

}  // namespace

TEST_CASE("An env that does not override render_image draws nothing, at the default frame rate", "[envs][contract][render]") {
  const std::unique_ptr<rlx::Env> env = after_two_steps(std::make_unique<PlainEnv>());
  CHECK_FALSE(env->render().has_value());
  CHECK(env->render_fps() == rlx::Env::kDefaultRenderFps);
}

TEST_CASE("A well-formed picture comes back as the env drew it, with the env's frame rate", "[envs][contract][render]") {
  rlx::RgbImage image(3, 2);
  for (size_t i = 0; i < image.rgb.size(); ++i) image.rgb[i] = static_cast<uint8_t>(10 * i);
  const std::unique_ptr<rlx::Env> env = drawing(image, 12.5);
  const std::optional<rlx::RgbImage> drawn = env->render();
  REQUIRE(drawn);
  CHECK(drawn->width == 3);
  CHECK(drawn->height == 2);
  CHECK(drawn->rgb == image.rgb);
  CHECK(env->render_fps() == 12.5);
}

TEST_CASE("A malformed picture is an EnvOutputError naming the env, render and what was expected", "[envs][contract][render]") {
  SECTION("too few bytes") {
    rlx::RgbImage image(10, 10);
    image.rgb.pop_back();
    CHECK_THROWS_MATCHES(drawing(image)->render(), rlx::EnvOutputError,
                         Catch::Matchers::Message("Picture-v0: render (episode step 2): image has 299 bytes of RGB, expected "
                                                  "width * height * 3 = 300 (10 x 10 pixels)"));
  }
  SECTION("no pixels") {
    CHECK_THROWS_MATCHES(drawing(rlx::RgbImage(0, 5))->render(), rlx::EnvOutputError,
                         Catch::Matchers::Message("Picture-v0: render (episode step 2): image is 0 x 5 pixels, expected a "
                                                  "width and height in [1, 8192]"));
  }
  SECTION("wider than the largest picture") {
    rlx::RgbImage image;  // the size claimed, without the memory
    image.width = rlx::Env::kMaxRenderSide + 1;
    image.height = 1;
    CHECK_THROWS_WITH(drawing(image)->render(), Catch::Contains("image is 8193 x 1 pixels"));
  }
  SECTION("the error carries the call and the field") {
    try {
      drawing(rlx::RgbImage(0, 0))->render();
      FAIL("no exception");
    } catch (const rlx::EnvOutputError& error) {
      CHECK(error.env_id() == "Picture-v0");
      CHECK(error.call() == "render");
      CHECK(error.field() == "image");
      CHECK(error.step() == 2);
    }
  }
}

TEST_CASE("A frame rate that is not positive, or over 1000, is an EnvOutputError naming the env", "[envs][contract][render]") {
  for (double fps : {0.0, -5.0, 1e6, std::nan("")}) {
    INFO(fps);
    CHECK_THROWS_WITH(drawing(rlx::RgbImage(1, 1), fps)->render_fps(),
                      Catch::StartsWith("Picture-v0: render_fps (episode step 2): frames per second is ") &&
                          Catch::EndsWith(", expected a rate in (0, 1000]"));
  }
}
