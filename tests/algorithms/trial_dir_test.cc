// A run's trial directory: its default name, and a claim that keeps runs started in the same
// second (a seed loop, a tuner) out of each other's directories.
#include <catch2/catch.hpp>

#include <set>
#include <thread>
#include <vector>

#include "algorithms/trial_dir.h"
#include "core/atomic_file.h"
#include "core/experiment.h"
#include "tests/cli/run_rlx.h"
#include "tests/core/test_util.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

Experiment cartpole(int64_t seed) {
  Experiment e = parse_experiments("exp:\n  env: CartPole-v1\n  algorithm: PPO\n  stop: {timesteps_total: 1000}\n", "t.yaml", ".").front();
  e.config.set("seed", seed);
  return e;
}

TEST_CASE("the default trial name is algorithm, env, seed and the second the run started", "[algorithms][trial]") {
  std::tm when{};
  when.tm_year = 2026 - 1900;
  when.tm_mon = 11;
  when.tm_mday = 3;
  when.tm_hour = 9;
  when.tm_min = 5;
  when.tm_sec = 20;
  when.tm_isdst = -1;
  CHECK(default_trial_name(cartpole(7), std::mktime(&when)) == "PPO_CartPole-v1_seed7_20261203-090520");
  Experiment minatar = cartpole(1);
  minatar.env = "MinAtar/Breakout-v1";  // a namespaced id: one directory, not two
  CHECK(default_trial_name(minatar, std::mktime(&when)) == "PPO_MinAtar-Breakout-v1_seed1_20261203-090520");
}

TEST_CASE("runs started in the same second claim different trial directories", "[algorithms][trial]") {
  test::TempDir tmp;
  const std::string name = default_trial_name(cartpole(7), 1764752720);
  CHECK(claim_trial_dir(tmp.path(), name) == tmp / name);
  CHECK(claim_trial_dir(tmp.path(), name) == tmp / (name + "_2"));
  // Many at once: every claim gets a directory of its own.
  std::vector<fs::path> claimed(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < claimed.size(); ++i) threads.emplace_back([&, i] { claimed[i] = claim_trial_dir(tmp.path(), name); });
  for (auto& thread : threads) thread.join();
  std::set<fs::path> distinct(claimed.begin(), claimed.end());
  CHECK(distinct.size() == claimed.size());
  CHECK(distinct.count(tmp / name) == 0);
  CHECK(distinct.count(tmp / (name + "_2")) == 0);
  for (const fs::path& dir : distinct) CHECK(fs::is_directory(dir));
}

TEST_CASE("a trial directory that cannot be made is an error naming it", "[algorithms][trial]") {
  test::TempDir tmp;
  write_file_atomic(tmp / "file", "x");
  const std::string error = test::error_of<std::exception>([&] { claim_trial_dir(tmp / "file", "t"); });
  CHECK_THAT(error, Catch::Contains((tmp / "file").string()));
}

TEST_CASE("two rlx train runs of one seed started together both finish, each in a directory of its own", "[algorithms][trial][cli]") {
  test::TempDir tmp;
  const std::string run = std::string(RLX_BINARY_DIR) + "/rlx train " + RLX_SOURCE_DIR +
                          "/experiments/cartpole-ppo.yaml --workers 0 --seed 4 --set stop.timesteps_total=2048 -q --output " +
                          (tmp / "runs").string();
  // Started together, both stop by their step budget (exit status 3).
  int status[2] = {-1, -1};
  std::vector<std::thread> runs;
  for (int i = 0; i < 2; ++i) {
    runs.emplace_back([&, i] {
      const int raw = std::system((run + " >/dev/null 2>" + (tmp / ("run" + std::to_string(i) + ".err")).string()).c_str());
      status[i] = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    });
  }
  for (auto& thread : runs) thread.join();
  INFO(test::read_text_file((tmp / "run0.err").string()) << test::read_text_file((tmp / "run1.err").string()));
  CHECK(status[0] == 3);
  CHECK(status[1] == 3);
  const std::vector<std::string> trials = test::names_in(tmp / "runs" / "cartpole-ppo");
  REQUIRE(trials.size() == 2);
  for (const std::string& trial : trials) CHECK(fs::exists(tmp / "runs" / "cartpole-ppo" / trial / "result.json"));
}

}  // namespace
}  // namespace rlx
