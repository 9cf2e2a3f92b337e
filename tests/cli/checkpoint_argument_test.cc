// A CHECKPOINT argument may name a trial directory or its checkpoints/ folder: `rlx evaluate`,
// `rlx export` and `rlx train --resume` then take its newest checkpoint and say which.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::run_rlx;

// How often `needle` occurs in `text`.
size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("A trial directory or its checkpoints/ folder names its newest checkpoint, said once on stderr", "[cli][checkpoint]") {
  rlx::test::TempDir tmp;
  const std::string experiment = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml";
  auto r = run_rlx("train " + experiment + " --workers 0 --set stop.training_iteration=2 --set checkpoint_freq=1 --output " +
                   (tmp / "runs").string() + " --trial-name t -q");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  const fs::path trial = tmp / "runs/cartpole-ppo/t";
  REQUIRE(fs::exists(trial / "checkpoints/checkpoint_000001"));
  const std::string newest = (trial / "checkpoints/checkpoint_000002").string();

  for (const std::string& given : {trial.string(), (trial / "checkpoints").string(), trial.string() + "/checkpoints/"}) {
    r = run_rlx("evaluate " + given + " --episodes 1");
    INFO(given << "\n" << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(count_of(r.err, "using " + newest + ", the newest checkpoint in " + given) == 1);
  }
  r = run_rlx("export " + trial.string() + " -o " + (tmp / "policy.rlxp").string());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(count_of(r.err, "using " + newest + ", the newest checkpoint in " + trial.string()) == 1);
  CHECK(fs::exists(tmp / "policy.rlxp"));

  // A checkpoint named itself: used as before, with nothing said.
  r = run_rlx("evaluate " + (trial / "checkpoints/checkpoint_000001").string() + " --episodes 1");
  CHECK(r.exit_code == 0);
  CHECK(count_of(r.err, "the newest checkpoint in") == 0);

  // --resume continues from the newest one: iteration 3 follows iteration 2.
  r = run_rlx("train --resume " + trial.string() + " --set stop.training_iteration=3 -q");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(count_of(r.err, "using " + newest + ", the newest checkpoint in " + trial.string()) == 1);
  CHECK_THAT(r.out, Catch::Contains("at iteration 3:"));
  CHECK(fs::exists(trial / "checkpoints/checkpoint_000003"));
}

TEST_CASE("A folder that holds no checkpoint is refused, naming it and what was looked for", "[cli][checkpoint]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs/exp/stopped_early";
  fs::create_directories(trial / "checkpoints");
  for (const std::string& command : {"evaluate " + trial.string(), "export " + trial.string() + " -o " + (tmp / "p.rlxp").string(),
                                     "train --resume " + trial.string() + " -q"}) {
    const auto r = run_rlx(command);
    INFO(command << "\n" << r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("no checkpoint in " + trial.string()) &&
                          Catch::Contains("checkpoint_NNNNNN/checkpoint.json") &&
                          Catch::Contains((trial / "checkpoints").string()));
  }
  CHECK_FALSE(fs::exists(tmp / "p.rlxp"));
}
