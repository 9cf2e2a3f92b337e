// rlx plot's data: trials read from progress.csv, seeds grouped, bands over seeds, PBT exploits.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/temp_dir.h"
#include "watch/plot_data.h"

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string params(int seed, double lr = 0.0003) {
  return "cartpole-ppo:\n  env: CartPole-v1\n  config:\n    seed: " + std::to_string(seed) + "\n    lr: " +
         std::to_string(lr) + "\n    clip_param: 0.2\n";
}

}  // namespace

TEST_CASE("read_trial reads progress.csv's columns, numbers and params.yaml's experiment", "[watch][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  const fs::path trial = dir.path() / "cartpole-ppo" / "PPO_seed0";
  write_file(trial / "progress.csv",
             "training_iteration,timesteps_total,episode_return_mean,note\n"
             "1,512,20.5,\"a, b\"\n"
             "2,1024,,x\n"
             "3,1536,40,\n"
             "4,20");  // a row still being written
  write_file(trial / "params.yaml", params(0));
  const rlx::TrialResults results = rlx::read_trial(trial);
  CHECK(results.name == "PPO_seed0");
  CHECK(results.experiment == "cartpole-ppo");
  CHECK(results.columns == std::vector<std::string>{"training_iteration", "timesteps_total", "episode_return_mean", "note"});
  REQUIRE(results.cells.size() == 3);
  CHECK(results.config.at("lr") == "0.000300");
  const rlx::Series series = results.series("timesteps_total", "episode_return_mean");
  CHECK(series.x == std::vector<double>{512, 1536});  // the empty cell's row is left out
  CHECK(series.y == std::vector<double>{20.5, 40});
  CHECK_THROWS_AS(results.series("timesteps_total", "no_such_column"), std::invalid_argument);
}

TEST_CASE("read_trial without progress.csv names the file and why", "[watch][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  CHECK_THROWS_WITH(rlx::read_trial(dir.path()),
                    Catch::StartsWith((dir.path() / "progress.csv").string() + ": cannot be read: no such file (is '"));
  std::filesystem::create_directory(dir.path() / "progress.csv");
  CHECK_THROWS_WITH(rlx::read_trial(dir.path()), Catch::Contains("progress.csv: cannot be read: it is a directory"));
}

TEST_CASE("find_trial_dirs finds a trial, an experiment's trials and an output root's", "[watch][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_file(dir.path() / "exp" / "b" / "progress.csv", "timesteps_total\n");
  write_file(dir.path() / "exp" / "a" / "progress.csv", "timesteps_total\n");
  fs::create_directories(dir.path() / "exp" / "logs");
  CHECK(rlx::find_trial_dirs(dir.path() / "exp" / "a") == std::vector<fs::path>{dir.path() / "exp" / "a"});
  CHECK(rlx::find_trial_dirs(dir.path() / "exp") ==
        std::vector<fs::path>{dir.path() / "exp" / "a", dir.path() / "exp" / "b"});
  CHECK(rlx::find_trial_dirs(dir.path()).size() == 2);
  CHECK_THROWS_WITH(rlx::find_trial_dirs(dir.path() / "exp" / "logs"), Catch::Contains("holds no trial"));
  CHECK_THROWS_WITH(rlx::find_trial_dirs(dir.path() / "missing"), Catch::Contains("no folder"));
}

TEST_CASE("group_by_config groups trials that differ only in their seed", "[watch][plot]") {
  std::vector<rlx::TrialResults> trials(5);
  const std::string keys[] = {params(0), params(1), params(0, 0.001), params(2), ""};
  for (size_t i = 0; i < trials.size(); ++i) {
    trials[i].experiment = "cartpole-ppo";
    trials[i].config_key = keys[i];
  }
  // read_trial drops the seed line; do the same here.
  for (auto& trial : trials) {
    const size_t seed = trial.config_key.find("    seed:");
    if (seed != std::string::npos) trial.config_key.erase(seed, trial.config_key.find('\n', seed) - seed + 1);
  }
  const std::vector<rlx::TrialGroup> groups = rlx::group_by_config(trials);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].members == std::vector<size_t>{0, 1, 3});
  CHECK(groups[1].members == std::vector<size_t>{2});  // another lr: another curve
  CHECK(groups[2].members == std::vector<size_t>{4});  // no params.yaml: a curve of its own
}

TEST_CASE("read_trial's grouping key ignores only the seed", "[watch][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  for (int seed : {0, 1}) {
    write_file(dir.path() / std::to_string(seed) / "progress.csv", "timesteps_total\n1\n");
    write_file(dir.path() / std::to_string(seed) / "params.yaml", params(seed));
  }
  CHECK(rlx::read_trial(dir.path() / "0").config_key == rlx::read_trial(dir.path() / "1").config_key);
}

TEST_CASE("band_of gives mean, min and max at every logged step, interpolating between rows", "[watch][plot]") {
  const rlx::Series a{{0, 100, 200}, {0, 10, 20}};
  const rlx::Series b{{0, 50, 200}, {10, 20, 40}};
  const rlx::Series c{{0, 100}, {5, 5}};  // stopped at 100
  const rlx::Band band = rlx::band_of({a, b, c});
  CHECK(band.x == std::vector<double>{0, 50, 100, 200});
  CHECK(band.runs == std::vector<int>{3, 3, 3, 2});
  // At 50: a interpolates to 5, b logged 20, c interpolates to 5.
  CHECK(band.mean[1] == Approx(10));
  CHECK(band.min[1] == Approx(5));
  CHECK(band.max[1] == Approx(20));
  // At 100: a 10, b between 20 (50) and 40 (200): 26.67, c 5.
  CHECK(band.mean[2] == Approx((10 + 20 + 20.0 / 150 * 50 + 5) / 3));
  // At 200 only a and b reach.
  CHECK(band.mean[3] == Approx(30));
  CHECK(band.min[3] == Approx(20));
  CHECK(band.max[3] == Approx(40));
}

TEST_CASE("value_at interpolates inside a series and misses outside it", "[watch][plot]") {
  const rlx::Series s{{10, 20}, {1, 3}};
  CHECK(*rlx::value_at(s, 15) == Approx(2));
  CHECK(*rlx::value_at(s, 20) == Approx(3));
  CHECK_FALSE(rlx::value_at(s, 5));
  CHECK_FALSE(rlx::value_at(s, 21));
}

TEST_CASE("read_pbt_edges reads donor, receiver, steps and new hyperparameters, skipping a torn line", "[watch][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  const fs::path log = dir.path() / "pbt_log.jsonl";
  write_file(log,
             R"({"id":"trial_00000@1","trial":"trial_00000","donor":"trial_00003","donor_timesteps_total":6144,)"
             R"("timesteps_total":6656,"training_iteration":13,"new_params":{"lr":0.0005894622555308,"clip_param":0.1},)"
             R"("old_params":{"lr":0.0024,"clip_param":0.3}})"
             "\n"
             R"({"id":"trial_00001@1","trial":"trial_00001","donor":"trial_00002","donor_timesteps_total":12288,)"
             R"("timesteps_total":12288,"training_iteration":24,"new_params":{"lr":0.001,"clip_param":0.2}})"
             "\n"
             R"({"id":"trial_00002@1","trial":"tri)");
  const std::vector<rlx::ExploitEdge> edges = rlx::read_pbt_edges(log);
  REQUIRE(edges.size() == 2);
  CHECK(edges[0].donor == "trial_00003");
  CHECK(edges[0].receiver == "trial_00000");
  CHECK(edges[0].donor_step == 6144);
  CHECK(edges[0].step == 6656);
  CHECK(edges[0].iteration == 13);
  using Params = std::vector<std::pair<std::string, std::string>>;
  CHECK(edges[0].new_params == Params{{"clip_param", "0.1"}, {"lr", "5.89e-4"}});
  CHECK(edges[0].old_params == Params{{"clip_param", "0.3"}, {"lr", "2.4e-3"}});
  CHECK(edges[1].old_params.empty());
}

TEST_CASE("read_pbt_edges names the file and line of an entry that is no exploit", "[watch][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  const fs::path log = dir.path() / "pbt_log.jsonl";
  write_file(log, "{\"trial\":\"trial_00000\"}\n");
  CHECK_THROWS_WITH(rlx::read_pbt_edges(log), Catch::Contains("pbt_log.jsonl:1"));
  CHECK_THROWS_WITH(rlx::read_pbt_edges(dir.path() / "none.jsonl"), Catch::Contains("none.jsonl"));
}
