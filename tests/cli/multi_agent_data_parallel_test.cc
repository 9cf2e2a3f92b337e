// `rlx train --learners 2` of a multi-agent env: every trained policy's learner is data-parallel
// over the same group (rank 0 plus one `rlx learner` process), each command preceded by the
// policy it is for; the first update of each policy is the one a single learner makes, a frozen
// policy is never sent to the ranks, and the run resumes with another number of learners.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "core/file_read.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::run_rlx;

// Two trained policies with two agents each, and a frozen one that only acts.
const char* kExperiment =
    "ma-dp:\n"
    "  env: MultiAgentCartPole-v0\n"
    "  algorithm: PPO\n"
    "  stop: {training_iteration: 2}\n"
    "  config: {num_workers: 0, num_envs_per_worker: 2, rollout_fragment_length: 32, train_batch_size: 256, "
    "minibatch_size: 64, num_epochs: 2, learner_backend: torch, checkpoint_freq: 1, seed: 5}\n"
    "  policies: {left: {}, right: {lr: 0.0001}, still: {}}\n"
    "  policy_mapping: {agent_0: left, agent_1: right, agent_2: left, agent_3: still}\n"
    "  policies_to_train: [left, right]\n";

}  // namespace

TEST_CASE("rlx train --learners 2 trains every policy of a multi-agent env data-parallel, as one learner does",
          "[cli][dp][multi_agent]") {
  rlx::test::TempDir tmp;
  const fs::path file = tmp / "ma-dp.yaml";
  rlx::test::write_text(file, kExperiment);
  std::vector<std::vector<nlohmann::json>> runs;
  for (const char* learners : {"1", "2"}) {
    INFO(learners << " learners");
    const std::string trial = std::string("l") + learners;
    const auto r = run_rlx("train " + file.string() + " --learners " + learners + " --output " + (tmp / "runs").string() +
                           " --trial-name " + trial + " -q");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 3);  // the iteration budget ended it
    runs.push_back(rlx::test::json_lines(rlx::read_file(tmp / "runs" / "ma-dp" / trial / "result.jsonl")));
    REQUIRE(runs.back().size() == 2);
    const nlohmann::json& last = runs.back().back();
    for (const char* trained : {"left", "right"}) {
      INFO(trained);
      CHECK(last["policy"][trained]["learner"]["policy_version"] == 3);
      if (std::string(learners) == "2") CHECK(last["policy"][trained]["learner"]["num_learners"] == 2);
    }
    CHECK_FALSE(last["policy"]["still"].contains("learner"));
    if (std::string(learners) == "2") {
      const std::string rank_log = rlx::read_file(tmp / "runs" / "ma-dp" / trial / "logs" / "learner_rank_1.log");
      CHECK_THAT(rank_log, Catch::Contains("the driver said stop"));
    }
  }
  // The same seed samples the same first batch of each policy, and two ranks train on it as one learner.
  for (const char* policy : {"left", "right"}) {
    for (const char* key : {"policy_loss", "vf_loss", "entropy", "grad_norm"}) {
      INFO(policy << " " << key);
      const double one = runs[0][0]["policy"][policy]["learner"][key].get<double>();
      const double two = runs[1][0]["policy"][policy]["learner"][key].get<double>();
      CHECK(two == Approx(one).epsilon(1e-4).margin(1e-7));
    }
  }
  // Policies with other settings learn differently: the rank really serves each one's own learner.
  CHECK(runs[1][0]["policy"]["left"]["learner"]["policy_loss"] != runs[1][0]["policy"]["right"]["learner"]["policy_loss"]);

  // A data-parallel checkpoint resumes with one learner, and a single-learner one with three.
  for (const auto& [trial, learners] : {std::pair<std::string, std::string>{"l2", "1"}, {"l1", "3"}}) {
    const fs::path checkpoint = tmp / "runs" / "ma-dp" / trial / "checkpoints" / "checkpoint_000001";
    const auto resumed = run_rlx("train --resume " + checkpoint.string() + " --learners " + learners +
                                 " --set stop.training_iteration=2 -q");
    INFO(trial << " resumed with " << learners << ": " << resumed.out << resumed.err);
    CHECK(resumed.exit_code == 3);
    CHECK_THAT(resumed.out, Catch::Contains("at iteration 2"));
  }
}
