// `rlx train --learners M --set learner_sync=parameter_server`: rank 0 serves the update's
// minibatch steps to every rank and applies each gradient on arrival. It solves CartPole; a
// straggler computes fewer of the steps without a staleness bound and keeps pace under
// max_staleness 0; every applied gradient's staleness is in the results; settings it cannot
// train are refused by name.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "run_rlx.h"

using rlx::test::read_text_file;
using rlx::test::run_rlx;
using rlx::test::temp_dir;

namespace {

const std::string kCartPole = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml";

nlohmann::json learner_of(const std::string& trial) {
  return nlohmann::json::parse(read_text_file(trial + "/result.json")).at("learner");
}

int64_t sum_of(const nlohmann::json& counts) {
  int64_t sum = 0;
  for (const auto& count : counts) sum += count.get<int64_t>();
  return sum;
}

}  // namespace

TEST_CASE("rlx train with a parameter server of 3 learner ranks solves CartPole with PPO (synchronous sampling)",
          "[cli][dp][parameter_server][learning]") {
  const std::string out = temp_dir("ps_learning");
  // The gradients arrive in whatever order the ranks finish them, so runs differ: 56k-87k steps
  // in five tries; the budget is twice the example's.
  const auto r = run_rlx("train " + kCartPole + " --learners 3 --workers 0 --seed 1 --set learner_sync=parameter_server"
                         " --set stop.timesteps_total=200000 --trial-name t --output " + out + " -q");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("stopped by episode_return_mean"));
  const nlohmann::json learner = learner_of(out + "/cartpole-ppo/t");
  INFO(learner.dump());
  CHECK(learner.at("learner_sync") == "parameter_server");
  CHECK(learner.at("num_learners") == 3);
  // Every minibatch step of the update applied once, shared by the 3 ranks.
  const int64_t steps = learner.at("num_minibatch_steps").get<int64_t>();
  CHECK(steps > 0);
  CHECK(sum_of(learner.at("tasks_per_rank")) == steps);
  CHECK(sum_of(learner.at("staleness_counts")) == steps);
  CHECK(learner.at("ps_refused") == 0);
  CHECK(learner.at("staleness_max").get<int64_t>() >= 1);
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("A straggling rank of a parameter server computes fewer steps unless max_staleness holds the others to its pace",
          "[cli][dp][parameter_server]") {
  const std::string out = temp_dir("ps_straggler");
  std::vector<nlohmann::json> learners;
  for (const char* bound : {"1000", "0"}) {
    const std::string trial = std::string("s") + bound;
    const auto r = run_rlx("train " + kCartPole + " --learners 3 --workers 0 --seed 1 --set learner_sync=parameter_server"
                           " --set max_staleness=" + bound + " --set debug_slow_rank=1 --set debug_slow_factor=30"
                           " --set stop.training_iteration=2 --set stop.episode_return_mean=null --trial-name " + trial +
                           " --output " + out + " -q");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 3);
    learners.push_back(learner_of(out + "/cartpole-ppo/" + trial));
  }
  INFO(learners[0].dump() << "\n" << learners[1].dump());
  const auto straggler_tasks = [](const nlohmann::json& learner) { return learner.at("tasks_per_rank").at(1).get<int64_t>(); };
  const int64_t steps = learners[0].at("num_minibatch_steps").get<int64_t>();
  CHECK(straggler_tasks(learners[0]) < steps / 6);       // far below its third
  CHECK(straggler_tasks(learners[1]) >= steps / 3 - 1);  // lock step: its third
  CHECK(learners[0].at("held_back") == 0);
  CHECK(learners[1].at("held_back").get<int64_t>() > 0);
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("learner_sync parameter_server refuses what it cannot train by name", "[cli][dp][parameter_server]") {
  const std::string out = temp_dir("ps_refusals");
  const std::string dqn = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-dqn.yaml";
  struct Case {
    std::string args, message;
  };
  for (const Case& c : {Case{dqn + " --learners 2", "learner_sync: parameter_server serves PPO's and APPO's minibatch steps, not DQN's"},
                        Case{kCartPole + " --learners 2 --set elastic=true", "learner_sync: parameter_server is not elastic"},
                        Case{kCartPole + " --learners 2 --set use_lstm=true", "trains no recurrent model"}}) {
    const auto r = run_rlx("train " + c.args + " --workers 0 --set learner_sync=parameter_server --trial-name t --output " +
                           out + " -q");
    INFO(c.args << "\n" << r.out << r.err);
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
  std::system(("rm -rf " + out).c_str());
}
