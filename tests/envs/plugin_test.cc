// Env plugins: building examples/custom_env against the package config, loading, errors.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/plugin.h"
#include "envs/plugin_loader.h"
#include "envs/registry.h"
#include "envs/vector_env.h"

namespace fs = std::filesystem;

namespace {

// The text of a file, empty when it cannot be read.
std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A single-quoted shell word.
std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs a shell command with its output in log; fails the test, showing the log, unless it succeeds.
void run_or_fail(const std::string& command, const fs::path& log) {
  const int status = std::system((command + " > " + shell_quote(log.string()) + " 2>&1").c_str());
  INFO("command: " << command << "\noutput:\n" << read_text(log));
  REQUIRE(status == 0);
}

// A fresh scratch directory under the build tree.
fs::path scratch_dir(const std::string& name) {
  const fs::path dir = fs::path(RLX_BINARY_DIR) / "tests" / "scratch" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The message of the std::runtime_error that f throws; fails the test when it throws none.
template <typename F>
std::string runtime_error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  FAIL("expected a std::runtime_error");
  return {};
}

// Configures and builds examples/custom_env against the build tree's rlx package (once per
// process) and returns the path of the plugin it makes.
const fs::path& custom_env_plugin() {
  static const fs::path plugin = [] {
    const fs::path work = scratch_dir("custom_env_example");
    const std::string cmake = shell_quote(RLX_CMAKE_COMMAND);
    run_or_fail(cmake + " -S " + shell_quote(RLX_SOURCE_DIR "/examples/custom_env") + " -B " +
                    shell_quote((work / "build").string()) + " -G " + shell_quote(RLX_CMAKE_GENERATOR) +
                    " -DCMAKE_CXX_COMPILER=" + shell_quote(RLX_CXX_COMPILER) +
                    " -Drlx_DIR=" + shell_quote(RLX_BINARY_DIR),
                work / "configure.log");
    run_or_fail(cmake + " --build " + shell_quote((work / "build").string()), work / "build.log");
    // Multi-config generators put the module in a per-config folder, so look for it.
    for (const auto& entry : fs::recursive_directory_iterator(work / "build")) {
      if (entry.path().filename() == "librlx_custom_env.so") return entry.path();
    }
    FAIL("the example build made no librlx_custom_env.so");
    return fs::path();
  }();
  return plugin;
}

}  // namespace

TEST_CASE("the custom_env example builds against the build tree's rlx package and its env runs",
          "[envs][plugins]") {
  const fs::path& plugin = custom_env_plugin();

  rlx::EnvRegistry registry;
  rlx::load_env_plugin(plugin.string(), registry);
  REQUIRE(registry.ids() == std::vector<std::string>{"GridWalk-v0"});
  const rlx::EnvSpec& spec = registry.spec("GridWalk-v0");
  CHECK(spec.observation_space == rlx::Space::box({10}, 0.0f, 1.0f));
  CHECK(spec.action_space == rlx::Space::discrete(2));
  CHECK(spec.max_episode_steps == 50);
  REQUIRE(spec.reward_threshold.has_value());

  auto env = registry.make("GridWalk-v0");
  auto twin = registry.make("GridWalk-v0");
  std::vector<float> obs(10), twin_obs(10);

  SECTION("reset gives a one-hot start cell in 2..6 matching state()") {
    env->reset(7, obs.data());
    const auto state = env->state();
    REQUIRE(state.size() == 1);
    CHECK(state[0] >= 2);
    CHECK(state[0] <= 6);
    for (int i = 0; i < 10; ++i) CHECK(obs[static_cast<size_t>(i)] == (i == static_cast<int>(state[0]) ? 1.0f : 0.0f));
  }

  SECTION("walking right reaches the goal; the same seed repeats the episode") {
    env->reset(11, obs.data());
    twin->reset(11, twin_obs.data());
    CHECK(obs == twin_obs);
    double total = 0;
    rlx::StepResult result;
    int steps = 0;
    while (!result.terminated && !result.truncated) {
      result = env->step(rlx::Action{1, nullptr}, obs.data());
      const rlx::StepResult twin_result = twin->step(rlx::Action{1, nullptr}, twin_obs.data());
      CHECK(obs == twin_obs);
      CHECK(result.reward == twin_result.reward);
      total += result.reward;
      ++steps;
    }
    CHECK(result.terminated);
    CHECK(env->state() == std::vector<double>{9.0});
    CHECK(obs[9] == 1.0f);
    CHECK(result.reward == 1.0);
    CHECK(total == Approx(1.0 - 0.01 * (steps - 1)));
  }

  SECTION("set_state places the agent; one step from cell 8 goes to 7 or 9") {
    env->reset(3, obs.data());
    env->set_state({8.0}, obs.data());
    CHECK(obs[8] == 1.0f);
    const rlx::StepResult result = env->step(rlx::Action{1, nullptr}, obs.data());
    const double cell = env->state().at(0);
    REQUIRE((cell == 7.0 || cell == 9.0));
    CHECK(result.terminated == (cell == 9.0));
    CHECK(result.reward == (cell == 9.0 ? 1.0 : -0.01));
    CHECK_THROWS_AS(env->set_state({2.5}, obs.data()), std::invalid_argument);
    CHECK_THROWS_AS(env->set_state({10.0}, obs.data()), std::invalid_argument);
    CHECK_THROWS_AS(env->set_state({1.0, 2.0}, obs.data()), std::invalid_argument);
    CHECK_THROWS_AS(env->step(rlx::Action{2, nullptr}, obs.data()), std::invalid_argument);
  }

  SECTION("render draws the corridor: the pit red, the goal green, the agent a blue disc on its cell") {
    env->reset(3, obs.data());
    env->set_state({4.0}, obs.data());
    const std::optional<rlx::RgbImage> image = env->render();
    REQUIRE(image);
    CHECK(image->width == 400);
    CHECK(image->height == 40);
    // The middle of cell i is pixel (40 i + 20, 20); a square's corner is (40 i + 4, 4).
    const auto colour = [&](int x, int y) {
      const uint8_t* pixel = image->pixel(x, y);
      return std::vector<int>{pixel[0], pixel[1], pixel[2]};
    };
    CHECK(colour(20, 20) == std::vector<int>{200, 40, 40});    // the pit
    CHECK(colour(380, 20) == std::vector<int>{40, 170, 70});   // the goal
    CHECK(colour(180, 20) == std::vector<int>{50, 100, 230});  // the agent in cell 4
    CHECK(colour(164, 4) == std::vector<int>{200, 200, 200});  // the floor of cell 4 around the disc
    CHECK(colour(140, 20) == std::vector<int>{200, 200, 200}); // cell 3: no agent
    env->set_state({5.0}, obs.data());
    const std::optional<rlx::RgbImage> moved = env->render();
    REQUIRE(moved);
    CHECK(moved->pixel(180, 20)[2] == 200);  // cell 4: floor again
    CHECK(moved->pixel(220, 20)[2] == 230);  // cell 5: the agent
    CHECK(env->render_fps() == 5);
  }

  SECTION("the time limit truncates an agent that stays in the middle") {
    env->reset(5, obs.data());
    rlx::StepResult result;
    int steps = 0;
    while (!result.terminated && !result.truncated) {
      const int64_t action = env->state().at(0) < 5 ? 1 : 0;
      result = env->step(rlx::Action{action, nullptr}, obs.data());
      ++steps;
    }
    CHECK(result.truncated);
    CHECK_FALSE(result.terminated);
    CHECK(steps == 50);
  }

  SECTION("a VectorEnv runs the plugin's factory") {
    rlx::VectorEnv vec(registry.factory("GridWalk-v0"), 3);
    std::vector<float> batch_obs(30), final_obs(30), rewards(3);
    std::vector<uint8_t> terminated(3), truncated(3);
    vec.reset(1, batch_obs.data());
    std::vector<int64_t> actions(3, 1);
    for (int t = 0; t < 20; ++t) {
      vec.step(rlx::ActionBatch{actions.data(), nullptr},
               rlx::VectorStepBuffers{batch_obs.data(), rewards.data(), terminated.data(), truncated.data(),
                                      final_obs.data(), nullptr, nullptr});
      for (int i = 0; i < 3; ++i) {
        float sum = 0;
        for (int j = 0; j < 10; ++j) sum += batch_obs[static_cast<size_t>(i * 10 + j)];
        CHECK(sum == 1.0f);
      }
    }
  }

  SECTION("an EnvPluginLoader loads the example once, however the path is spelled") {
    rlx::EnvRegistry fresh;
    rlx::EnvPluginLoader loader(fresh);
    CHECK(loader.load(plugin.string()));
    const fs::path link = scratch_dir("plugin_link") / "link-to-plugin.so";
    fs::create_symlink(plugin, link);
    CHECK_FALSE(loader.load(link.string()));
    CHECK_FALSE(loader.load((plugin.parent_path() / ".." / plugin.parent_path().filename() / plugin.filename()).string()));
    CHECK(fresh.ids() == std::vector<std::string>{"GridWalk-v0"});
    CHECK(loader.loaded_paths() == std::vector<std::string>{fs::canonical(plugin).string()});
  }
}

TEST_CASE("a good plugin registers its env into the registrar it is given", "[envs][plugins]") {
  rlx::EnvRegistry registry;
  rlx::load_env_plugin(RLX_TEST_PLUGIN_GOOD, registry);
  REQUIRE(registry.ids() == std::vector<std::string>{"PluginCounter-v0"});
  auto env = registry.make("PluginCounter-v0");
  float obs = -1;
  env->reset(0, &obs);
  CHECK(obs == 0.0f);
  const rlx::StepResult result = env->step(rlx::Action{1, nullptr}, &obs);
  CHECK(obs == 1.0f);
  CHECK(result.reward == 1.0);

  // A second, independent registry gets its own copy of the env.
  rlx::EnvRegistry other;
  rlx::load_env_plugin(RLX_TEST_PLUGIN_GOOD, other);
  CHECK(other.contains("PluginCounter-v0"));
}

TEST_CASE("loading a plugin reports what is wrong, naming the path", "[envs][plugins]") {
  rlx::EnvRegistry registry;
  std::vector<std::string> ids_after;  // what the registry holds once the section is done

  SECTION("a missing file") {
    CHECK(runtime_error_of([&] { rlx::load_env_plugin("/nonexistent/librlx_nothing.so", registry); }) ==
          "env plugin '/nonexistent/librlx_nothing.so': no such file");
  }

  SECTION("a directory") {
    const fs::path dir = scratch_dir("plugin_dir");
    const std::string message = runtime_error_of([&] { rlx::load_env_plugin(dir.string(), registry); });
    CHECK(message == "env plugin '" + dir.string() + "': is a directory, not a shared library");
  }

  SECTION("a file that is not a shared library, with dlopen's reason") {
    const fs::path file = scratch_dir("plugin_text") / "not_a_library.so";
    std::ofstream(file) << "just text\n";
    const std::string message = runtime_error_of([&] { rlx::load_env_plugin(file.string(), registry); });
    CHECK_THAT(message, Catch::StartsWith("env plugin '" + file.string() + "': cannot load: "));
    CHECK_THAT(message, Catch::Contains("not_a_library.so"));  // dlerror's text names the file too
  }

  SECTION("a library without the plugin symbols") {
    const std::string message = runtime_error_of([&] { rlx::load_env_plugin(RLX_TEST_PLUGIN_NO_SYMBOLS, registry); });
    CHECK_THAT(message, Catch::StartsWith(std::string("env plugin '") + RLX_TEST_PLUGIN_NO_SYMBOLS + "': "));
    CHECK_THAT(message, Catch::Contains("missing symbol 'rlx_env_plugin_abi_version'"));
  }

  SECTION("a library without the registration function") {
    const std::string message =
        runtime_error_of([&] { rlx::load_env_plugin(RLX_TEST_PLUGIN_NO_REGISTER, registry); });
    CHECK_THAT(message, Catch::StartsWith(std::string("env plugin '") + RLX_TEST_PLUGIN_NO_REGISTER + "': "));
    CHECK_THAT(message, Catch::Contains("missing symbol 'rlx_register_envs'"));
  }

  SECTION("an ABI version mismatch, without running the registration") {
    const std::string message = runtime_error_of([&] { rlx::load_env_plugin(RLX_TEST_PLUGIN_WRONG_ABI, registry); });
    CHECK_THAT(message, Catch::StartsWith(std::string("env plugin '") + RLX_TEST_PLUGIN_WRONG_ABI + "': "));
    CHECK_THAT(message, Catch::Contains("ABI version " + std::to_string(rlx::kEnvPluginAbiVersion + 1)));
    CHECK_THAT(message, Catch::Contains("this rlx uses version " + std::to_string(rlx::kEnvPluginAbiVersion)));
  }

  SECTION("a registration that throws, which registers nothing") {
    const std::string message = runtime_error_of([&] { rlx::load_env_plugin(RLX_TEST_PLUGIN_THROWS, registry); });
    CHECK(message ==
          std::string("env plugin '") + RLX_TEST_PLUGIN_THROWS + "': registration failed: the test plugin gave up");
  }

  SECTION("an env id that is already registered, which leaves the registry as it was") {
    rlx::load_env_plugin(RLX_TEST_PLUGIN_GOOD, registry);
    const std::string message = runtime_error_of([&] { rlx::load_env_plugin(RLX_TEST_PLUGIN_GOOD, registry); });
    CHECK(message ==
          std::string("env plugin '") + RLX_TEST_PLUGIN_GOOD + "': environment id 'PluginCounter-v0' is already registered");
    ids_after = {"PluginCounter-v0"};
  }

  CHECK(registry.ids() == ids_after);
}

TEST_CASE("every way a plugin fails to load is an EnvPluginError, an input error", "[envs][plugins]") {
  const fs::path text_file = scratch_dir("plugin_error_type") / "not_a_library.so";
  std::ofstream(text_file) << "just text\n";
  const fs::path dir = scratch_dir("plugin_error_dir");
  for (const std::string& path : {std::string("/nonexistent/librlx_nothing.so"), dir.string(), text_file.string(),
                                 std::string(RLX_TEST_PLUGIN_NO_SYMBOLS), std::string(RLX_TEST_PLUGIN_NO_REGISTER),
                                 std::string(RLX_TEST_PLUGIN_WRONG_ABI), std::string(RLX_TEST_PLUGIN_THROWS)}) {
    INFO(path);
    rlx::EnvRegistry registry;
    CHECK_THROWS_AS(rlx::load_env_plugin(path, registry), rlx::EnvPluginError);
  }
  rlx::EnvRegistry registry;
  rlx::load_env_plugin(RLX_TEST_PLUGIN_GOOD, registry);
  CHECK_THROWS_AS(rlx::load_env_plugin(RLX_TEST_PLUGIN_GOOD, registry), rlx::EnvPluginError);  // an id taken
}

TEST_CASE("EnvPluginLoader loads each file once and retries after a failure", "[envs][plugins]") {
  rlx::EnvRegistry registry;
  rlx::EnvPluginLoader loader(registry);
  CHECK(loader.load(RLX_TEST_PLUGIN_GOOD));
  CHECK_FALSE(loader.load(RLX_TEST_PLUGIN_GOOD));
  CHECK(registry.ids() == std::vector<std::string>{"PluginCounter-v0"});

  CHECK_THROWS_AS(loader.load(RLX_TEST_PLUGIN_THROWS), std::runtime_error);
  CHECK_THROWS_AS(loader.load(RLX_TEST_PLUGIN_THROWS), std::runtime_error);  // a failure is not remembered
  CHECK(loader.loaded_paths() == std::vector<std::string>{fs::canonical(RLX_TEST_PLUGIN_GOOD).string()});
}

TEST_CASE("load_env_plugins adds to the global registry once per file", "[envs][plugins]") {
  // Run in a child process so the global registry of this test binary stays built-ins only.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 0;
    try {
      rlx::load_env_plugins({RLX_TEST_PLUGIN_GOOD, RLX_TEST_PLUGIN_GOOD});
      rlx::load_env_plugins({RLX_TEST_PLUGIN_GOOD});
      if (!rlx::global_env_registry().contains("PluginCounter-v0")) code = 1;
      if (rlx::global_env_registry().make("PluginCounter-v0")->spec().id != "PluginCounter-v0") code = 2;
      try {
        rlx::load_env_plugins({RLX_TEST_PLUGIN_NO_SYMBOLS});
        code = 3;
      } catch (const std::runtime_error&) {
      }
    } catch (...) {
      code = 4;
    }
    _exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
