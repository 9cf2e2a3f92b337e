// `rlx train --learners 2`: data-parallel training as a user runs it (rank 0 plus a spawned
// `rlx learner` process): it learns CartPole, trains a recurrent PPO as one learner does, resumes
// with another number of learners, and a learner rank that dies makes the run fail with an error
// naming it instead of hanging, and one that stops answering fails it with the collective's
// message (no C++ stack trace).
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/child_process.h"
#include "run_rlx.h"

using rlx::test::read_text_file;
using rlx::test::run_rlx;
using rlx::test::temp_dir;

namespace {

const std::string kExperiments = std::string(RLX_SOURCE_DIR) + "/experiments/";

}  // namespace

TEST_CASE("rlx train --learners 2 solves CartPole with PPO (synchronous sampling, seed 2)", "[cli][dp][learning]") {
  const std::string out = temp_dir("dp_learning");
  const auto r = run_rlx("train " + kExperiments + "cartpole-ppo.yaml --learners 2 --workers 0 --seed 2 --trial-name t --output " +
                         out + " -q");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("stopped by episode_return_mean"));
  const auto final_row = nlohmann::json::parse(read_text_file(out + "/cartpole-ppo/t/result.json"));
  INFO(final_row.dump());
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("rlx train --learners 2 checkpoints, and resumes with 1 or 3 learners (PPO, APPO and DQN)", "[cli][dp]") {
  const std::string out = temp_dir("dp_resume");
  for (const std::string file : {"cartpole-ppo.yaml", "cartpole-dqn.yaml", "cartpole-appo.yaml"}) {
    INFO(file);
    const bool dqn = file == "cartpole-dqn.yaml";
    const std::string name = file.substr(0, file.size() - 5);
    // DQN: batch_size 64 splits over 1, 2 or 4 learners; fewer gradient steps keep it quick.
    auto r = run_rlx("train " + kExperiments + file + " --learners 2 --workers 0 --set stop.training_iteration=2 "
                     "--set stop.episode_return_mean=null --trial-name t --output " + out + " -q" +
                     (dqn ? " --set gradient_steps=8 --set learning_starts=200" : ""));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 3);
    const std::string checkpoint = out + "/" + name + "/t/checkpoints/checkpoint_000002";
    CHECK_THAT(r.out, Catch::Contains(checkpoint));
    for (const char* learners : {"1", dqn ? "4" : "3"}) {
      r = run_rlx("train --resume " + checkpoint + " --learners " + std::string(learners) +
                  " --set stop.training_iteration=3 -q");
      INFO(learners << " learners: " << r.out << r.err);
      CHECK(r.exit_code == 3);
      CHECK_THAT(r.out, Catch::Contains("at iteration 3"));
    }
    // Evaluating a data-parallel checkpoint needs one process: no learner rank is started.
    r = run_rlx("evaluate " + checkpoint + " --episodes 2 --log-level debug");
    INFO("evaluate: " << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("2 episodes"));
    CHECK_THAT(r.out + r.err, !Catch::Contains("learner rank"));
  }
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("rlx train fails naming the learner rank that died, instead of hanging", "[cli][dp]") {
  const std::string out = temp_dir("dp_dead_rank");
  // Start a long run, kill its learner rank 1 once the group is up, and collect the status.
  const std::string rlx = std::string(RLX_BINARY_DIR) + "/rlx";
  const std::string script =
      "cd " + out + " || exit 1; (timeout 120 " + rlx + " train " + kExperiments +
      "cartpole-ppo.yaml --learners 2 --workers 0 --set stop.timesteps_total=100000000 "
      "--set stop.episode_return_mean=null --set checkpoint_freq=0 --trial-name t --output " + out +
      " -q >train.out 2>train.err & echo $! >train.pid; wait $! ; echo $? >train.status) & "
      "for i in $(seq 1 600); do [ -s train.pid ] && CHILD=$(pgrep -P $(pgrep -P $(cat train.pid) | head -1) 2>/dev/null | head -1); "
      "[ -n \"$CHILD\" ] && [ -s " + out + "/cartpole-ppo/t/progress.csv ] && break; sleep 0.1; done; "
      "kill -9 $CHILD; wait";
  std::system(("bash -c '" + script + "'").c_str());
  const std::string status = read_text_file(out + "/train.status");
  const std::string err = read_text_file(out + "/train.err");
  INFO("status " << status << " stderr: " << err);
  CHECK(status.rfind("1", 0) == 0);  // exit 1: an error (124 would be the timeout's)
  CHECK_THAT(err, Catch::Contains("learner rank 1"));
  CHECK_THAT(err, Catch::Contains("killed by signal 9"));
  // The rank's log is in the run's logs/, and the error names it and quotes its last lines.
  const std::string rank_log = out + "/cartpole-ppo/t/logs/learner_rank_1.log";
  const std::string log = read_text_file(rank_log);
  INFO(log);
  CHECK_THAT(log, Catch::Contains("] [learner rank 1] [info] rlx 0.1.0 (LibTorch ") &&
                      Catch::Contains("learner rank 1 of 2 starting: pid ") &&
                      Catch::Contains("] [learner rank 1] [info] joined the group of 2 learners"));
  CHECK_THAT(err, Catch::Contains("its last lines in " + rank_log + ":\n    | [") &&
                      Catch::Contains("] [learner rank 1] [info] following the driver's commands"));
  CHECK_THAT(read_text_file(out + "/cartpole-ppo/t/logs/driver.log"),
             Catch::Contains("] [driver] [info] learner rank 1 of 2 started: pid ") &&
                 Catch::Contains("] [driver] [error] the run ends with an error: learner rank 1 (pid "));
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("A SIGSTOPped learner rank fails the run with the collective's message and no stack trace", "[cli][dp]") {
  const std::string out = temp_dir("dp_stopped_rank");
  rlx::ChildProcess train({std::string(RLX_BINARY_DIR) + "/rlx", "train", kExperiments + "cartpole-ppo.yaml", "--learners", "2",
                           "--workers", "0", "--set", "stop.timesteps_total=100000000", "--set", "stop.episode_return_mean=null",
                           "--set", "learner_timeout_s=3", "--trial-name", "t", "--output", out, "-q"},
                          out + "/train.log");
  REQUIRE(rlx::test::wait_for([&] { return rlx::test::lines_in(out + "/cartpole-ppo/t/result.jsonl") >= 2; },
                              std::chrono::seconds(120)));
  const std::vector<pid_t> ranks = rlx::test::children_of(train.pid());
  REQUIRE(ranks.size() == 1);
  ::kill(ranks[0], SIGSTOP);  // alive, but silent: the next collective times out
  REQUIRE(rlx::test::wait_for([&] { return train.poll().has_value(); }, std::chrono::seconds(60)));
  const std::string log = read_text_file(out + "/train.log");
  INFO(log);
  CHECK(train.poll()->describe() == "exit status 1");
  CHECK_THAT(log, Catch::Contains("rlx train: error: gloo") && Catch::Contains("failed (a learner rank died or left?)"));
  CHECK_THAT(log, !Catch::Contains("frame #") && !Catch::Contains("Exception raised from"));
  const auto result = nlohmann::json::parse(read_text_file(out + "/cartpole-ppo/t/result.json"));
  CHECK_THAT(result.at("error").get<std::string>(), !Catch::Contains("frame #"));
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("rlx train --learners 2 trains a recurrent PPO (LSTM) and its first update is one learner's", "[cli][dp][recurrent]") {
  const std::string out = temp_dir("dp_recurrent");
  // One local fragment of 8 envs x 32 steps: rank 0 splits it by envs, 4 columns per rank;
  // minibatches of about 64 samples, so each rank trains on its members of 4 per epoch.
  std::vector<nlohmann::json> first_rows;
  for (const char* learners : {"1", "2"}) {
    INFO(learners << " learners");
    const std::string trial = std::string("l") + learners;
    const auto r = run_rlx("train " + kExperiments + "cartpole-novel-ppo.yaml --learners " + learners +
                           " --workers 0 --seed 3 --set stop.training_iteration=3 --set stop.episode_return_mean=null"
                           " --set num_epochs=2 --set minibatch_size=64 --set max_seq_len=8 --trial-name " + trial +
                           " --output " + out + " -q");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 3);  // the iteration budget ended it
    CHECK_THAT(r.out, Catch::Contains("stopped by training_iteration at iteration 3"));
    const std::string dir = out + "/cartpole-novel-ppo/" + trial;
    const auto final_row = nlohmann::json::parse(read_text_file(dir + "/result.json"));
    INFO(final_row.dump());
    CHECK(final_row.at("training_iteration") == 3);
    CHECK(final_row.at("timesteps_total") == 768);
    for (const char* key : {"policy_loss", "vf_loss", "entropy", "approx_kl", "grad_norm", "explained_variance"}) {
      CHECK(std::isfinite(final_row.at("learner").at(key).get<double>()));
    }
    if (std::string(learners) == "2") CHECK(final_row.at("learner").at("num_learners") == 2);
    CHECK(final_row.at("learner").at("num_minibatch_steps") == 2 * 4);
    std::ifstream rows(dir + "/result.jsonl");
    std::string line;
    REQUIRE(std::getline(rows, line));
    first_rows.push_back(nlohmann::json::parse(line).at("learner"));
  }
  // The same seed samples the same first batch, and two ranks train on it as one learner does.
  for (const char* key : {"policy_loss", "vf_loss", "entropy", "grad_norm"}) {
    INFO(key);
    CHECK(first_rows[1].at(key).get<double>() == Approx(first_rows[0].at(key).get<double>()).epsilon(1e-4).margin(1e-7));
  }
  std::system(("rm -rf " + out).c_str());
}
