// Plugins are recorded by path, file name and content hash: `rlx evaluate` and `rlx train
// --resume` find a moved plugin through --env-plugin, warn when its file changed, and say how to
// fix a missing one; resuming with another network shape names the key that differs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::run_rlx;

// PPO on the test plugin's PluginCounter-v0, two quick synchronous iterations.
const char* kCounterYaml = R"(counter:
  env: PluginCounter-v0
  algorithm: PPO
  stop: {training_iteration: 2}
  config: {num_workers: 0, num_envs_per_worker: 2, rollout_fragment_length: 32, minibatch_size: 64, num_epochs: 1}
)";

// The plugins a checkpoint's experiment records.
nlohmann::json read_plugins(const std::string& checkpoint) {
  const nlohmann::json manifest = nlohmann::json::parse(rlx::test::read_text_file(checkpoint + "/checkpoint.json"));
  return manifest.at("experiment").at("plugins");
}

}  // namespace

TEST_CASE("A moved plugin is found with --env-plugin on evaluate and resume, and a changed one is warned about",
          "[cli][plugins]") {
  rlx::test::TempDir tmp;
  fs::create_directories(tmp / "a");
  const fs::path plugin = tmp / "a" / "libcounter.so";
  fs::copy_file(RLX_TEST_PLUGIN_GOOD, plugin);
  rlx::test::write_text(tmp / "counter.yaml", kCounterYaml);
  auto r = run_rlx("train " + (tmp / "counter.yaml").string() + " --env-plugin " + plugin.string() + " --output " +
                   (tmp / "runs").string() + " --trial-name t -q");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  const std::string checkpoint = (tmp / "runs/counter/t/checkpoints/checkpoint_000002").string();
  const nlohmann::json recorded = read_plugins(checkpoint);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0]["file"] == "libcounter.so");
  CHECK(recorded[0]["path"] == plugin.string());
  CHECK(recorded[0]["sha256"].get<std::string>().size() == 64);

  fs::rename(tmp / "a", tmp / "b");
  const fs::path moved = tmp / "b" / "libcounter.so";
  r = run_rlx("evaluate " + checkpoint + " --episodes 2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("env plugin '" + plugin.string() + "': no such file") &&
                        Catch::Contains("the run recorded libcounter.so") && Catch::Contains("pass --env-plugin PATH"));
  r = run_rlx("evaluate " + checkpoint + " --episodes 2 --env-plugin " + moved.string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);

  // A --env-plugin file that is not there either: named as given, with what the run recorded.
  r = run_rlx("evaluate " + checkpoint + " --episodes 2 --env-plugin nothere.so");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--env-plugin nothere.so: no such file (" + (fs::current_path() / "nothere.so").string() +
                                    ")") &&
                        Catch::Contains("it was to replace libcounter.so, which the run recorded at " + plugin.string() +
                                        ", sha256 " + recorded[0]["sha256"].get<std::string>().substr(0, 12) + "..."));
  CHECK_THAT(r.err, !Catch::Contains("recorded nothere.so"));

  // The same file name with other bytes (a rebuilt plugin): it loads, with a warning.
  std::ofstream(moved, std::ios::binary | std::ios::app) << "rebuilt";
  r = run_rlx("evaluate " + checkpoint + " --episodes 2 --env-plugin " + moved.string());
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("warning: env plugin '" + moved.string() + "' differs from the libcounter.so the run recorded"));

  r = run_rlx("train --resume " + checkpoint + " --set stop.training_iteration=3 -q --env-plugin " + moved.string());
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("differs from the libcounter.so"));
  // The resumed run records where the plugin is now.
  CHECK(read_plugins((tmp / "runs/counter/t/checkpoints/checkpoint_000003").string())[0]["path"] == moved.string());
}

TEST_CASE("Resuming with another network or env names the key that differs", "[cli][train]") {
  rlx::test::TempDir tmp;
  const std::string experiment = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml";
  auto r = run_rlx("train " + experiment + " --workers 0 --set stop.training_iteration=1 --output " + (tmp / "runs").string() +
                   " --trial-name t -q");
  REQUIRE(r.exit_code == 3);
  const std::string checkpoint = (tmp / "runs/cartpole-ppo/t/checkpoints/checkpoint_000001").string();
  r = run_rlx("train --resume " + checkpoint + " --set hidden_sizes=[32] -q");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("hidden_sizes is [32] here but [64, 64] in the checkpoint"));
  r = run_rlx("train --resume " + checkpoint + " --set env=Acrobot-v1 -q");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("env is Acrobot-v1 here but CartPole-v1 in the checkpoint"));
}
