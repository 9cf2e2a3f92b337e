// Env renderers: every built-in env draws a frame of the size asked for, and a fixed state
// draws as the stored reference picture (within a tolerance: Cairo's and Mesa's software
// rasterizers may round differently across CPUs and versions; Mesa's other rasterizer,
// softpipe, drew Hopper 1.76 / 255 off on average, llvmpipe at 128-bit vectors exactly). A
// wrong camera, body or colour is tens of levels off. RLX_UPDATE_REFERENCES=1
// rewrites the references (look at them before committing).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "envs/env.h"
#include "envs/registry.h"
#include "watch/env_renderer.h"

namespace {

namespace fs = std::filesystem;

const fs::path kReferenceDir = fs::path(RLX_SOURCE_DIR) / "tests" / "data" / "watch";

std::string to_ppm(const rlx::RgbImage& frame) {
  std::string text = "P6\n" + std::to_string(frame.width) + " " + std::to_string(frame.height) + "\n255\n";
  text.append(reinterpret_cast<const char*>(frame.rgb.data()), frame.rgb.size());
  return text;
}

rlx::RgbImage from_ppm(const std::string& text) {
  int width = 0, height = 0, max_value = 0, consumed = 0;
  REQUIRE(std::sscanf(text.c_str(), "P6 %d %d %d%n", &width, &height, &max_value, &consumed) == 3);
  rlx::RgbImage frame(width, height);
  REQUIRE(text.size() == static_cast<size_t>(consumed) + 1 + frame.rgb.size());
  std::copy(text.begin() + consumed + 1, text.end(), frame.rgb.begin());
  return frame;
}

// The state of `env_id` after a reset with seed 0 and `steps` steps of a fixed action.
std::vector<double> state_after(const std::string& env_id, int steps) {
  auto env = rlx::global_env_registry().make(env_id);
  const rlx::EnvSpec& spec = env->spec();
  std::vector<float> obs(static_cast<size_t>(spec.observation_space.size()));
  std::vector<float> values(static_cast<size_t>(spec.action_space.is_box() ? spec.action_space.size() : 0), 0.5f);
  env->reset(0, obs.data());
  for (int t = 0; t < steps; ++t) {
    rlx::Action action;
    action.index = 1;
    action.values = values.data();
    const rlx::StepResult step = env->step(action, obs.data());
    if (step.terminated || step.truncated) break;
  }
  return env->snapshot().value().exact_state;
}

size_t distinct_colours(const rlx::RgbImage& frame) {
  std::set<uint32_t> colours;
  for (size_t i = 0; i + 2 < frame.rgb.size(); i += 3) {
    colours.insert(uint32_t{frame.rgb[i]} << 16 | uint32_t{frame.rgb[i + 1]} << 8 | frame.rgb[i + 2]);
  }
  return colours.size();
}

// Compares with the stored reference (or writes it under RLX_UPDATE_REFERENCES=1).
void check_against_reference(const rlx::RgbImage& frame, const std::string& name) {
  const fs::path path = kReferenceDir / name;
  const char* update = std::getenv("RLX_UPDATE_REFERENCES");
  if (update != nullptr && std::string(update) == "1") rlx::write_file_atomic(path, to_ppm(frame));
  const rlx::RgbImage reference = from_ppm(rlx::read_file(path));
  REQUIRE(reference.width == frame.width);
  REQUIRE(reference.height == frame.height);
  double total = 0;
  size_t far = 0;
  for (size_t i = 0; i < frame.rgb.size(); ++i) {
    const int difference = std::abs(int{frame.rgb[i]} - int{reference.rgb[i]});
    total += difference;
    if (difference > 48) ++far;
  }
  const double mean = total / static_cast<double>(frame.rgb.size());
  INFO(name << ": mean absolute difference " << mean << ", " << far << " of " << frame.rgb.size()
            << " values off by more than 48");
  CHECK(mean < 4.0);
  CHECK(static_cast<double>(far) < 0.02 * static_cast<double>(frame.rgb.size()));
}

}  // namespace

TEST_CASE("every built-in env draws frames of the size asked for", "[watch][video][render]") {
  const std::vector<std::string> ids = rlx::renderable_env_ids();
  for (const std::string& id : rlx::global_env_registry().ids()) {
    INFO(id);
    CHECK(rlx::can_film_env(id));  // every built-in env has a renderer, or (MinAtar) draws itself
  }
  for (const std::string& id : ids) {
    INFO(id);
    auto renderer = rlx::make_env_renderer(id, 64, 48);
    const std::vector<double> start = state_after(id, 0), later = state_after(id, 20);
    const rlx::RgbImage first = renderer->render(start);
    CHECK(first.width == 64);
    CHECK(first.height == 48);
    CHECK(first.rgb.size() == 64u * 48u * 3u);
    CHECK(distinct_colours(first) > 2);
    CHECK(renderer->render(later).rgb != first.rgb);  // the picture follows the state
    CHECK(renderer->fps() > 0);
    CHECK_THROWS_WITH(renderer->render({1.0}), Catch::Contains(id) && Catch::Contains("got 1"));
  }
}

TEST_CASE("renderers take Gymnasium's frame sizes and rates by default", "[watch][video][render]") {
  const rlx::RgbImage cart_pole = rlx::make_env_renderer("CartPole-v1", 0, 0)->render({0, 0, 0.1, 0});
  CHECK(cart_pole.width == 600);
  CHECK(cart_pole.height == 400);
  CHECK(rlx::make_env_renderer("CartPole-v1", 0, 0)->fps() == 50);
  CHECK(rlx::make_env_renderer("Pendulum-v1", 0, 0)->fps() == 30);
  CHECK(rlx::make_env_renderer("Hopper-v4", 32, 32)->fps() == Approx(125));
  CHECK(rlx::make_env_renderer("HalfCheetah-v4", 32, 32)->fps() == Approx(20));
}

TEST_CASE("an env without a renderer, or a bad size, is refused by name", "[watch][video][render]") {
  CHECK_THROWS_WITH(rlx::make_env_renderer("MyPlugin-v0", 0, 0),
                    Catch::Contains("MyPlugin-v0") && Catch::Contains("CartPole-v1"));
  CHECK_THROWS_WITH(rlx::make_env_renderer("CartPole-v1", -1, 10), Catch::Contains("-1 x 10"));
}

TEST_CASE("CartPole, Acrobot and MountainCar at fixed states draw as their reference pictures",
          "[watch][video][render]") {
  check_against_reference(rlx::make_env_renderer("CartPole-v1", 150, 100)->render({0.5, 0, 0.15, 0}),
                          "cartpole_150x100.ppm");
  check_against_reference(rlx::make_env_renderer("Acrobot-v1", 100, 100)->render({0.8, 0.6, 0, 0}),
                          "acrobot_100x100.ppm");
  check_against_reference(rlx::make_env_renderer("MountainCar-v0", 150, 100)->render({-0.5, 0}),
                          "mountaincar_150x100.ppm");
}

TEST_CASE("Hopper at a fixed state draws as its reference picture", "[watch][video][render]") {
  check_against_reference(rlx::make_env_renderer("Hopper-v4", 96, 96)->render(state_after("Hopper-v4", 10)),
                          "hopper_96x96.ppm");
}
