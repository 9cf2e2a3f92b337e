#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config_schema.h"
#include "run_rlx.h"

using rlx::test::run_rlx;
using rlx::test::temp_dir;

namespace {

std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

TEST_CASE("rlx train stops on its budget with exit 3, and rlx evaluate runs the checkpoint", "[cli][train]") {
  const std::string out = temp_dir("train_cli");
  const std::string experiments = std::string(RLX_SOURCE_DIR) + "/experiments/";
  auto r = run_rlx("train " + experiments + "cartpole-ppo.yaml --set stop.training_iteration=2 "
                   "--set stop.episode_return_mean=null --trial-name t --output " + out + " -q");
  REQUIRE(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("stopped by training_iteration"));
  const std::string checkpoint = out + "/cartpole-ppo/t/checkpoints/checkpoint_000002";
  CHECK_THAT(r.out, Catch::Contains(checkpoint));
  // The final line rounds for people (4 significant digits); result.json keeps every digit.
  std::ifstream result_file(out + "/cartpole-ppo/t/result.json");
  const auto result = nlohmann::json::parse(result_file);
  CHECK_THAT(r.out, Catch::Contains(" steps, " + rlx::format_readable(result["time_total_s"].get<double>()) +
                                    " s, episode_return_mean " +
                                    rlx::format_readable(result["episode_return_mean"].get<double>()) + "\n"));

  r = run_rlx("evaluate " + checkpoint + " --episodes 3 --deterministic --seed 5");
  REQUIRE(r.exit_code == 0);
  const auto summary = nlohmann::json::parse(last_line(r.out));
  CHECK(summary["episodes"] == 3);
  for (const char* key : {"return_mean", "return_std", "return_min", "return_max", "len_mean"}) CHECK(summary.contains(key));
  CHECK(summary["return_min"].get<double>() >= 1.0);
  CHECK_THAT(r.out, Catch::Contains(": return " + rlx::format_readable(summary["return_mean"].get<double>()) + " +- " +
                                    rlx::format_readable(summary["return_std"].get<double>()) + " (min "));
  CHECK(run_rlx("evaluate " + checkpoint + " --episodes 3 --deterministic --seed 5").out == r.out);
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("rlx train names the file, key, line and what was expected on bad input", "[cli][train]") {
  const std::string dir = temp_dir("train_errors");
  auto unreadable = run_rlx("train " + dir + "/nothere.yaml");
  CHECK(unreadable.exit_code == 2);
  CHECK_THAT(unreadable.err, Catch::Contains(dir + "/nothere.yaml: cannot read the experiment file: no such file"));
  unreadable = run_rlx("train " + dir);
  CHECK(unreadable.exit_code == 2);
  CHECK_THAT(unreadable.err, Catch::Contains(dir + ": cannot read the experiment file: it is a directory"));
  const std::string file = dir + "/bad.yaml";
  std::ofstream(file) << "bad:\n  env: CartPole-v1\n  algorithm: PPO\n  stop: {timesteps_total: 1000}\n"
                         "  config:\n    lr: 0.001\n    num_epoch: 4\n";
  auto r = run_rlx("train " + file);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("bad.yaml:7") && Catch::Contains("num_epoch") && Catch::Contains("num_epochs"));

  std::ofstream(file) << "bad:\n  env: CartPole-v1\n  algorithm: PPO\n  stop: {timesteps_total: 1000}\n"
                         "  config:\n    lr: fast\n";
  r = run_rlx("train " + file);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("bad.yaml:6") && Catch::Contains("'lr'") && Catch::Contains("float"));

  r = run_rlx("train " + dir + "/missing.yaml");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("missing.yaml"));

  r = run_rlx("train " + std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml --set buffer_size=10");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("buffer_size") && Catch::Contains("DQN"));

  r = run_rlx("evaluate " + dir + "/no-such-checkpoint");
  CHECK(r.exit_code == 2);  // a refused checkpoint is bad input
  CHECK_THAT(r.err, Catch::Contains("no-such-checkpoint"));
  std::system(("rm -rf " + dir).c_str());
}
