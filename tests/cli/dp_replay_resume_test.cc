// Data-parallel DQN's replay shards in its checkpoints: `rlx train --learners 2`, synchronous,
// stopped at a checkpoint and resumed, trains on exactly as the run never stopped (every result
// row the same), because each rank's shard and the dealing of fragments to ranks come back.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_rlx.h"

using rlx::test::read_text_file;
using rlx::test::run_rlx;
using rlx::test::temp_dir;

namespace {

// The trial's result rows without what differs between attempts (times, sampler counts).
std::vector<nlohmann::json> result_rows(const std::string& trial) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(trial + "/result.jsonl");
  for (std::string line; std::getline(in, line);) {
    nlohmann::json row = nlohmann::json::parse(line);
    for (const char* key : {"time_total_s", "time_this_iter_s", "env_steps_per_s", "attempt", "sampler"}) row.erase(key);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

TEST_CASE("rlx train --learners 2 (DQN, synchronous) resumes bit-exactly with every rank's replay shard",
          "[cli][dp][resume][segments]") {
  const std::string out = temp_dir("dp_dqn_resume");
  const std::string common = "train " + std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-dqn.yaml --learners 2 --workers 0 "
                             "--seed 0 --set stop.episode_return_mean=null --set checkpoint_freq=2 --set learning_starts=200 "
                             "--set gradient_steps=16 --output " + out + " -q";
  auto r = run_rlx(common + " --set stop.training_iteration=4 --trial-name straight");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  r = run_rlx(common + " --set stop.training_iteration=2 --trial-name resumed");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  const std::string trial = out + "/cartpole-dqn/resumed";
  const std::string checkpoint = trial + "/checkpoints/checkpoint_000002";
  const auto manifest = nlohmann::json::parse(read_text_file(checkpoint + "/checkpoint.json"));
  INFO(manifest.value("replay", nlohmann::json()).dump());
  REQUIRE(manifest.at("replay").at("shards").size() == 2);
  for (const nlohmann::json& shard : manifest.at("replay").at("shards")) {
    REQUIRE(shard.at("segments").size() == 1);
    CHECK(std::filesystem::is_regular_file(trial + "/replay/" + shard.at("segments").at(0).at("file").get<std::string>()));
  }
  CHECK(std::filesystem::is_regular_file(checkpoint + "/replay_rest_rank1.bin"));

  r = run_rlx("train --resume " + checkpoint + " --set stop.training_iteration=4 -q");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  const std::vector<nlohmann::json> straight = result_rows(out + "/cartpole-dqn/straight"), resumed = result_rows(trial);
  REQUIRE(straight.size() == 4);
  REQUIRE(resumed.size() == 4);
  for (size_t i = 0; i < straight.size(); ++i) {
    INFO("iteration " << i + 1 << "\nstraight: " << straight[i].dump() << "\nresumed:  " << resumed[i].dump());
    CHECK(straight[i] == resumed[i]);
  }
  // The second checkpoint adds a segment per shard and keeps the first.
  const auto later = nlohmann::json::parse(read_text_file(trial + "/checkpoints/checkpoint_000004/checkpoint.json"));
  for (const nlohmann::json& shard : later.at("replay").at("shards")) CHECK(shard.at("segments").size() == 2);

  // Another number of learners cannot take the shards: the run says so and starts its replay empty.
  r = run_rlx("train --resume " + checkpoint + " --learners 1 --set stop.training_iteration=3 -q");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out + r.err, Catch::Contains("its replay is in 2 shards of 2 learners; this run has 1: the replay starts "
                                            "empty (resume with --learners 2 to keep it)"));
  std::system(("rm -rf " + out).c_str());
}
