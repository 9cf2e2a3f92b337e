// Self-play with a league over worker processes: the opponent plays snapshots of main and the
// league's scripted player in turn, the workers switching it by the weights they receive, and
// every game is scored against the opponent of its iteration.
#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "core/file_read.h"
#include "run_rlx.h"

TEST_CASE("Self-play with a scripted league trains in worker processes", "[cli][multi_agent]") {
  rlx::test::TempDir tmp;
  const auto file = tmp / "league.yaml";
  rlx::test::write_text(file,
                        "league:\n  env: ConnectFour-v0\n  algorithm: PPO\n  stop: {training_iteration: 8}\n"
                        "  config: {num_workers: 2, num_envs_per_worker: 4, rollout_fragment_length: 8, "
                        "train_batch_size: 256, minibatch_size: 128, num_epochs: 1, checkpoint_freq: 0}\n"
                        "  policies: {main: {}, opponent: {}}\n"
                        "  policy_mapping: {\"player_*\": {shuffle: [main, opponent]}}\n"
                        "  policies_to_train: [main]\n"
                        "  self_play: {policy: main, opponent: opponent, snapshot_every: 2, pool_size: 4, "
                        "sampling: uniform, league: [random]}\n");
  const auto r = rlx::test::run_rlx("train " + file.string() + " --trial-name t -q --output " + tmp.path().string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);  // the iteration budget ended it
  std::istringstream rows(rlx::read_file(tmp / "league" / "t" / "result.jsonl"));
  std::set<std::string> opponents;
  int64_t games = 0;
  for (std::string line; std::getline(rows, line);) {
    const nlohmann::json self_play = nlohmann::json::parse(line)["self_play"];
    opponents.insert(self_play["opponent"].get<std::string>());
    games += self_play["games"].get<int64_t>();
  }
  CHECK(opponents.count("random") == 1);
  CHECK(opponents.size() >= 2);  // snapshots of main too
  CHECK(games > 0);
}
