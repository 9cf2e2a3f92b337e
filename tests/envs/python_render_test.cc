// Python envs that draw themselves (Env::render through envs/python/): an (H, W, 3) uint8 array
// read through the buffer protocol, render_mode="rgb_array" passed while rlx films
// (ScopedPythonRenderMode), metadata["render_fps"], and what a wrong picture is told. The envs are
// in tests/envs/python/render_envs.py.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "envs/python_env.h"
#include "envs/registry.h"

namespace {

const std::string kModule = "python:render_envs:";

// A fresh instance of render_envs.py's `name` (registered on first use) after a reset and
// `steps` steps.
std::unique_ptr<rlx::Env> stepped_env(const std::string& name, int steps) {
  static const bool path_added = [] {
    rlx::add_python_path({std::string(RLX_SOURCE_DIR) + "/tests/envs/python"});
    return true;
  }();
  (void)path_added;
  rlx::register_python_env(kModule + name);
  std::unique_ptr<rlx::Env> env = rlx::global_env_registry().make(kModule + name);
  std::vector<float> obs(1);
  env->reset(0, obs.data());
  rlx::Action action;
  for (int i = 0; i < steps; ++i) env->step(action, obs.data());
  return env;
}

// Checks Painter's picture after `steps` steps: pixel (x, y) is (x, y, steps).
void check_painting(const rlx::RgbImage& image, int steps) {
  REQUIRE(image.width == 6);
  REQUIRE(image.height == 4);
  REQUIRE(image.rgb.size() == 6u * 4u * 3u);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) {
      INFO("pixel (" << x << ", " << y << ")");
      CHECK(image.pixel(x, y)[0] == x);
      CHECK(image.pixel(x, y)[1] == y);
      CHECK(image.pixel(x, y)[2] == steps);
    }
  }
}

}  // namespace

TEST_CASE("a Python env filmed by rlx is constructed with render_mode='rgb_array' and its picture crosses the bridge",
          "[envs][python][render]") {
  const rlx::ScopedPythonRenderMode render_mode;
  const std::unique_ptr<rlx::Env> env = stepped_env("Painter", 3);
  const std::optional<rlx::RgbImage> image = env->render();
  REQUIRE(image);
  check_painting(*image, 3);
  CHECK(env->render_fps() == 12);  // metadata["render_fps"]
}

TEST_CASE("a strided picture (a view of every other column) is read through its strides", "[envs][python][render]") {
  const rlx::ScopedPythonRenderMode render_mode;
  const std::unique_ptr<rlx::Env> env = stepped_env("StridedPainter", 2);
  const std::optional<rlx::RgbImage> image = env->render();
  REQUIRE(image);
  check_painting(*image, 2);
}

TEST_CASE("without render_mode a Gymnasium-style env's None is an error that says how to get pictures",
          "[envs][python][render]") {
  const std::unique_ptr<rlx::Env> env = stepped_env("Painter", 1);  // not filming: constructed as env_config says
  CHECK_THROWS_MATCHES(env->render(), rlx::EnvOutputError,
                       Catch::Matchers::Message(
                           "python:render_envs:Painter: render (episode step 1): return value is None, expected an (H, "
                           "W, 3) uint8 array; construct the env with render_mode='rgb_array' (rlx does when it films: rlx "
                           "evaluate --record)"));
}

TEST_CASE("a constructor without a render_mode parameter is not given one, and its None says so", "[envs][python][render]") {
  const rlx::ScopedPythonRenderMode render_mode;
  const std::unique_ptr<rlx::Env> env = stepped_env("KwargsOnly", 0);
  CHECK_THROWS_WITH(env->render(), Catch::Contains("python:render_envs:KwargsOnly: render (episode step 0)") &&
                                       Catch::Contains("the constructor has no render_mode parameter"));
}

TEST_CASE("a Python env without a render method draws nothing", "[envs][python][render]") {
  const rlx::ScopedPythonRenderMode render_mode;
  CHECK_FALSE(stepped_env("Blind", 0)->render().has_value());
  CHECK(stepped_env("Blind", 0)->render_fps() == rlx::Env::kDefaultRenderFps);
}

TEST_CASE("pictures of the wrong dtype or shape, and a frame rate that is no number, name the env and what was expected",
          "[envs][python][render]") {
  CHECK_THROWS_MATCHES(stepped_env("FloatPicture", 0)->render(), rlx::EnvOutputError,
                       Catch::Matchers::Message("python:render_envs:FloatPicture: render (episode step 0): return value is "
                                                "an array of float32, expected an (H, W, 3) array of uint8 (NumPy's, e.g. "
                                                "from render_mode='rgb_array')"));
  CHECK_THROWS_MATCHES(stepped_env("GreyPicture", 0)->render(), rlx::EnvOutputError,
                       Catch::Matchers::Message("python:render_envs:GreyPicture: render (episode step 0): return value has "
                                                "shape (4, 6), expected an (H, W, 3) array of uint8 (NumPy's, e.g. from "
                                                "render_mode='rgb_array')"));
  CHECK_THROWS_MATCHES(stepped_env("BadFps", 0)->render_fps(), rlx::EnvOutputError,
                       Catch::Matchers::Message("python:render_envs:BadFps: render_fps (episode step 0): "
                                                "metadata['render_fps'] is a str (fast), expected a number"));
}
