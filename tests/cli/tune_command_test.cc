// `rlx tune --env-plugin`: a plugin's env tuned end to end (fresh, --resume and --replay), the
// plugin recorded once however often it is given, and a moved plugin named again on --resume.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::run_rlx;

// 2 PPO trials on the test plugin's PluginCounter-v0, 4 iterations of 128 steps, PBT at 256.
const char* kPluginTuneYaml = R"(plugin-tune:
  env: PluginCounter-v0
  algorithm: PPO
  stop: {timesteps_total: 512}
  config:
    num_workers: 0
    num_envs_per_worker: 2
    rollout_fragment_length: 64
    minibatch_size: 64
    num_epochs: 1
    checkpoint_freq: 0
  tune:
    num_samples: 2
    max_concurrent_trials: 2
    scheduler:
      type: pbt
      time_attr: timesteps_total
      perturbation_interval: 256
      synch: true
      hyperparam_mutations:
        lr: [1.0e-3, 2.0e-3, 4.0e-3]
)";

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(rlx::test::read_text_file(path.string())); }

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// The plugins: of every checkpoint under `dir` (trials and replays), each as one JSON array.
std::vector<nlohmann::json> checkpoint_plugin_lists(const fs::path& dir) {
  std::vector<nlohmann::json> lists;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename() != "checkpoint.json") continue;
    // Each plugin is recorded as {file, path, sha256}: keep the paths.
    const nlohmann::json manifest = read_json(entry.path());
    nlohmann::json paths = nlohmann::json::array();
    for (const auto& plugin : manifest.at("experiment").at("plugins")) paths.push_back(plugin.at("path"));
    lists.push_back(paths);
  }
  return lists;
}

// A trial that exploited (its replay loads a donor), else the first.
std::string trial_to_replay(const fs::path& dir) {
  const std::string log = rlx::test::read_text_file((dir / "pbt_log.jsonl").string());
  if (log.empty()) return "trial_00000";
  return nlohmann::json::parse(log.substr(0, log.find('\n'))).at("trial").get<std::string>();
}

}  // namespace

TEST_CASE("rlx tune --env-plugin tunes a plugin's env, and --resume and --replay take the plugin again without listing it twice",
          "[cli][tune]") {
  rlx::test::TempDir tmp;
  fs::create_directories(tmp / "a");
  const fs::path plugin = tmp / "a" / "libcounter.so";
  fs::copy_file(RLX_TEST_PLUGIN_GOOD, plugin);
  rlx::test::write_text(tmp / "tune.yaml", kPluginTuneYaml);
  const fs::path dir = tmp / "runs/plugin-tune";

  // Without the plugin the env id is unknown: refused before any trial, with the plugin hint.
  const auto missing = run_rlx("tune " + (tmp / "tune.yaml").string() + " --output " + (tmp / "runs").string() + " --quiet");
  INFO(missing.out << missing.err);
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("unknown environment id 'PluginCounter-v0'") && Catch::Contains("--env-plugin PATH"));
  CHECK_FALSE(fs::exists(tmp / "runs"));

  const auto run = run_rlx("tune " + (tmp / "tune.yaml").string() + " --output " + (tmp / "runs").string() +
                           " --quiet --env-plugin " + plugin.string());
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("best trial: trial_0000"));
  CHECK(count_of(rlx::test::read_text_file((dir / "experiment.yaml").string()), plugin.string()) == 1);
  const nlohmann::json state = read_json(dir / "experiment_state.json");
  for (const auto& trial : state.at("trials")) {
    INFO(trial.dump());
    CHECK(trial.at("status") == "TERMINATED");
    CHECK(trial.at("timesteps_total") == 512);
    CHECK(trial.at("segments") == 2);  // the second resumed from a checkpoint
  }
  // Logs: the tuner's events and each segment's output in the run's logs/, and in every trial's
  // directory the same logs/ as an `rlx train` run's.
  CHECK_THAT(rlx::test::read_text_file((dir / "logs/tune.log").string()),
             Catch::Contains("] [tune] [info] trial_00000: segment 1 started, pid ") &&
                 Catch::Contains("] [tune] [info] trial_00001: segment 2 ended: exit status "));
  for (const auto& trial : state.at("trials")) {
    const std::string name = trial.at("name").get<std::string>();
    CHECK(fs::exists(dir / "logs" / (name + ".log")));
    const std::string driver = rlx::test::read_text_file((dir / name / "logs/driver.log").string());
    CHECK_THAT(driver, Catch::Contains("] [driver] [info] rlx 0.1.0 train, pid ") &&
                           Catch::Contains("resuming " + (dir / name / "checkpoints").string()));
  }
  // Every checkpoint of every segment (and exploit) lists the plugin exactly once.
  std::vector<nlohmann::json> lists = checkpoint_plugin_lists(dir);
  REQUIRE(lists.size() >= 4);
  for (const auto& list : lists) CHECK(list == nlohmann::json::array({plugin.string()}));

  // --resume with the same plugin again, under another path: the same file, loaded once.
  fs::create_symlink(plugin, tmp / "link.so");
  const auto resumed = run_rlx("tune --resume " + dir.string() + " --quiet --env-plugin " + (tmp / "link.so").string());
  INFO(resumed.out << resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK_THAT(resumed.out, Catch::Contains("resuming 2 trials"));
  CHECK(count_of(rlx::test::read_text_file((dir / "experiment.yaml").string()), "path: ") == 1);

  const std::string replayed_trial = trial_to_replay(dir);
  const auto replay = run_rlx("tune --replay " + (dir / replayed_trial).string() + " --env-plugin " + plugin.string());
  INFO(replay.out << replay.err);
  CHECK(replay.exit_code == 3);  // its budget ended it
  lists = checkpoint_plugin_lists(dir / ("replay_" + replayed_trial));
  REQUIRE(!lists.empty());
  for (const auto& list : lists) CHECK(list == nlohmann::json::array({plugin.string()}));

  // The plugin moves: the run's recorded path is gone, and --env-plugin names the new one.
  fs::rename(tmp / "a", tmp / "b");
  const fs::path moved = tmp / "b" / "libcounter.so";
  const auto stale = run_rlx("tune --resume " + dir.string() + " --quiet");
  INFO(stale.out << stale.err);
  CHECK(stale.exit_code == 2);
  CHECK_THAT(stale.err, Catch::Contains("env plugin '" + plugin.string() + "': no such file"));
  const auto pointed = run_rlx("tune --resume " + dir.string() + " --quiet --env-plugin " + moved.string());
  INFO(pointed.out << pointed.err);
  CHECK(pointed.exit_code == 0);
  const std::string experiment = rlx::test::read_text_file((dir / "experiment.yaml").string());
  CHECK(count_of(experiment, moved.string()) == 1);
  CHECK(count_of(experiment, plugin.string()) == 0);
  fs::remove_all(dir / ("replay_" + replayed_trial));
  const auto replay_moved = run_rlx("tune --replay " + (dir / replayed_trial).string() + " --env-plugin " + moved.string());
  INFO(replay_moved.out << replay_moved.err);
  CHECK(replay_moved.exit_code == 3);
}
