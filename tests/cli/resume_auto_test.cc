// `rlx train --resume auto --trial-name NAME`, as a requeued batch job runs it: the first run
// starts the trial, each later one continues it from its newest checkpoint that verifies
// (damaged ones skipped and named), and a trial left without any checkpoint is moved aside.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "core/atomic_file.h"
#include "core/checkpoint_dir.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::CommandOutput;
using rlx::test::read_text_file;
using rlx::test::run_rlx;

// cartpole-ppo in-process: iterations of 1024 steps, a checkpoint after each.
CommandOutput train_auto(const rlx::test::TempDir& tmp, int64_t timesteps) {
  return run_rlx("train " + std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml --workers 0 --seed 3 "
                 "--set stop.timesteps_total=" + std::to_string(timesteps) + " --set checkpoint_freq=1 "
                 "--resume auto --trial-name t --output " + (tmp / "runs").string() + " -q");
}

// progress.csv's first two columns (training_iteration, timesteps_total), one string a row.
std::vector<std::string> counter_rows(const fs::path& trial) {
  std::vector<std::string> rows;
  std::istringstream in(read_text_file((trial / "progress.csv").string()));
  std::string line;
  std::getline(in, line);
  REQUIRE(line.rfind("training_iteration,timesteps_total,", 0) == 0);
  while (std::getline(in, line)) rows.push_back(line.substr(0, line.find(',', line.find(',') + 1)));
  return rows;
}

}  // namespace

TEST_CASE("rlx train --resume auto without --trial-name is refused naming --trial-name", "[cli][resume]") {
  const CommandOutput r = run_rlx("train " + std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml --resume auto");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--resume auto needs") && Catch::Contains("--trial-name"));
}

TEST_CASE("rlx train --resume auto starts a new trial and then continues it from its newest checkpoint",
          "[cli][resume]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs/cartpole-ppo/t";
  CommandOutput r = train_auto(tmp, 2048);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains(trial.string() + " has no checkpoint yet; starting it"));
  CHECK(rlx::list_checkpoints(trial).size() == 2);

  r = train_auto(tmp, 4096);  // the same command with a larger budget, as after a requeue
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("continuing from " + rlx::checkpoint_path(trial, 2).string()));
  CHECK_THAT(r.out, Catch::Contains("at iteration 4: 4096 steps"));
  CHECK(counter_rows(trial) == std::vector<std::string>{"1,1024", "2,2048", "3,3072", "4,4096"});
  const auto result = nlohmann::json::parse(read_text_file((trial / "result.json").string()));
  CHECK(result["training_iteration"] == 4);
  CHECK(result["timesteps_total"] == 4096);
  CHECK(rlx::list_checkpoints(trial).size() == 4);
  CHECK(rlx::test::names_in(tmp / "runs/cartpole-ppo") == std::vector<std::string>{"t"});  // nothing moved aside
}

TEST_CASE("rlx train --resume auto skips a damaged newest checkpoint naming it and continues from the one before",
          "[cli][resume]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs/cartpole-ppo/t";
  REQUIRE(train_auto(tmp, 3072).exit_code == 3);
  const fs::path third = rlx::checkpoint_path(trial, 3);
  std::string manifest = rlx::read_file(third / rlx::kCheckpointManifestName);
  const size_t at = manifest.find("\"training_iteration\"");
  REQUIRE(at != std::string::npos);
  manifest[at + 1] = 'T';  // one changed byte of checkpoint.json
  rlx::write_file_atomic(third / rlx::kCheckpointManifestName, manifest);

  const CommandOutput r = train_auto(tmp, 4096);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("--resume auto: skipping " + third.string() + ": ") &&
                        Catch::Contains("checkpoint.json does not match its SHA-256"));
  CHECK_THAT(r.err, Catch::Contains("continuing from " + rlx::checkpoint_path(trial, 2).string()));
  CHECK_THAT(r.out, Catch::Contains("at iteration 4: 4096 steps"));
  // Iteration 3 ran again from checkpoint 2's counters, and its checkpoint was written anew.
  CHECK(counter_rows(trial) == std::vector<std::string>{"1,1024", "2,2048", "3,3072", "4,4096"});
  CHECK(rlx::read_checkpoint_dir(third).manifest["counters"]["training_iteration"] == 3);
}

TEST_CASE("rlx train --resume auto moves aside a trial with results but no checkpoint and starts afresh",
          "[cli][resume]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs/cartpole-ppo/t";
  REQUIRE(train_auto(tmp, 2048).exit_code == 3);
  fs::remove_all(trial / "checkpoints");  // a run stopped before its first checkpoint, say

  const CommandOutput r = train_auto(tmp, 1024);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  std::vector<std::string> names = rlx::test::names_in(tmp / "runs/cartpole-ppo");
  REQUIRE(names.size() == 2);
  CHECK(names[0] == "t");
  CHECK_THAT(names[1], Catch::Matches(R"(t\.abandoned-\d+)"));
  const fs::path aside = tmp / "runs/cartpole-ppo" / names[1];
  CHECK_THAT(r.err, Catch::Contains(trial.string() + " has no usable checkpoint; moved it to " + aside.string()));
  CHECK(counter_rows(aside) == std::vector<std::string>{"1,1024", "2,2048"});  // kept as it was
  CHECK(counter_rows(trial) == std::vector<std::string>{"1,1024"});            // counters start clean
  CHECK(rlx::list_checkpoints(trial).size() == 1);
}

TEST_CASE("rlx train --resume auto starts a trial that holds only logs where it is", "[cli][resume]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs/cartpole-ppo/t";
  fs::create_directories(trial / "logs");  // an attempt that failed before training
  rlx::test::write_text(trial / "logs/driver.log", "an earlier attempt\n");
  const CommandOutput r = train_auto(tmp, 1024);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains(trial.string() + " has no checkpoint yet; starting it"));
  CHECK(rlx::test::names_in(tmp / "runs/cartpole-ppo") == std::vector<std::string>{"t"});
  CHECK_THAT(read_text_file((trial / "logs/driver.log").string()), Catch::StartsWith("an earlier attempt\n"));
  CHECK(counter_rows(trial) == std::vector<std::string>{"1,1024"});
}
