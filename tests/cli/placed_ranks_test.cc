// `rlx train` started once per learner rank by an engine (torchrun's variables here, on one
// host): rank 0 trains and serves the rendezvous, rank 1 follows it and logs into the trial,
// and the run computes what `--learners 2` forked locally computes. Placement errors are usage
// errors naming the variable or key.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::read_text_file;
using Env = std::vector<std::pair<std::string, std::string>>;

const std::string kExperiment = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml";

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

// Two budget-bound iterations of cartpole-ppo in-process, seed 0, into OUTPUT/cartpole-ppo/t.
std::vector<std::string> train_args(const fs::path& output, const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {"train", kExperiment, "--workers", "0", "--seed", "0", "--set",
                                   "stop.timesteps_total=2048", "--trial-name", "t", "--output", output.string(), "-q"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// What rlx_checkpoint_diff says of two checkpoints (its last line: "max_rel_diff X").
std::string checkpoint_diff(const fs::path& a, const fs::path& b, const fs::path& scratch) {
  const std::string out = (scratch / "diff.out").string();
  const int status = std::system((std::string(RLX_CHECKPOINT_DIFF) + " " + a.string() + " " + b.string() + " >" + out +
                                  " 2>&1").c_str());
  const std::string text = read_text_file(out);
  INFO(text);
  CHECK(status == 0);
  const size_t last = text.rfind("max_rel_diff ");
  return last == std::string::npos ? text : text.substr(last, text.find('\n', last) - last);
}

}  // namespace

TEST_CASE("rlx train started once per rank by torchrun variables trains as one group and matches --learners 2",
          "[cli][dp][placement]") {
  rlx::test::TempDir tmp;
  const Env group = {{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(free_port())}};
  Env rank0 = group, rank1 = group;
  rank0.emplace_back("RANK", "0");
  rank1.emplace_back("RANK", "1");
  // Rank 1 first: it waits for rank 0's rendezvous.
  const auto follower = rlx::test::start_rlx(train_args(tmp / "placed"), tmp / "rank1.out", rank1);
  const auto leader = rlx::test::start_rlx(train_args(tmp / "placed"), tmp / "rank0.out", rank0);
  const std::optional<rlx::ChildExit> leader_exit = rlx::test::exit_within(*leader, std::chrono::seconds(90));
  const std::optional<rlx::ChildExit> follower_exit = rlx::test::exit_within(*follower, std::chrono::seconds(30));
  const fs::path trial = tmp / "placed/cartpole-ppo/t";
  INFO("rank 0: " << read_text_file((tmp / "rank0.out").string()) << "\nrank 1: "
                  << read_text_file((tmp / "rank1.out").string()));
  REQUIRE(leader_exit);
  REQUIRE(follower_exit);
  CHECK(leader_exit->describe() == "exit status 3");  // the budget ended the run
  CHECK(follower_exit->describe() == "exit status 0");  // stopped by rank 0
  CHECK_THAT(read_text_file((tmp / "rank0.out").string()),
             Catch::Contains("learner rank 0 of 2 on ") && Catch::Contains("rank from RANK, world size from WORLD_SIZE"));
  const std::string rank_log = read_text_file((trial / "logs/learner_rank_1.log").string());
  CHECK_THAT(rank_log, Catch::Contains("] [learner rank 1] [info] joined the group of 2 learners") &&
                           Catch::Contains("the driver said stop"));
  const auto placed = nlohmann::json::parse(read_text_file((trial / "result.json").string()));
  CHECK(placed["training_iteration"] == 2);
  CHECK(placed["learner"]["num_learners"] == 2);

  // The same seed with rank 1 forked by rank 0: the same losses and the same weights.
  const rlx::test::CommandOutput forked_run = rlx::test::run_rlx(
      "train " + kExperiment + " --learners 2 --workers 0 --seed 0 --set stop.timesteps_total=2048 --trial-name t "
      "--output " + (tmp / "forked").string() + " -q");
  INFO(forked_run.out << forked_run.err);
  REQUIRE(forked_run.exit_code == 3);
  const auto forked = nlohmann::json::parse(read_text_file((tmp / "forked/cartpole-ppo/t/result.json").string()));
  for (const char* key : {"policy_loss", "vf_loss", "grad_norm", "approx_kl", "entropy", "num_learners"}) {
    INFO(key);
    CHECK(placed["learner"][key] == forked["learner"][key]);
  }
  CHECK(placed["episode_return_mean"] == forked["episode_return_mean"]);
  CHECK(checkpoint_diff(trial / "checkpoints/checkpoint_000002", tmp / "forked/cartpole-ppo/t/checkpoints/checkpoint_000002",
                        tmp.path()) == "max_rel_diff 0");
}

TEST_CASE("rlx train with WORLD_SIZE but no rank is refused naming RANK", "[cli][placement]") {
  rlx::test::TempDir tmp;
  const auto train = rlx::test::start_rlx(train_args(tmp / "runs"), tmp / "train.out",
                                          {{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}});
  const std::optional<rlx::ChildExit> exit = rlx::test::exit_within(*train, std::chrono::seconds(30));
  const std::string out = read_text_file((tmp / "train.out").string());
  INFO(out);
  REQUIRE(exit);
  CHECK(exit->describe() == "exit status 2");
  CHECK_THAT(out, Catch::Contains("cannot place this learner rank: WORLD_SIZE is set but no rank is") &&
                      Catch::Contains("RANK"));
  CHECK_FALSE(fs::exists(tmp / "runs"));
}

TEST_CASE("rlx train refuses a num_learners other than the ranks started", "[cli][placement]") {
  rlx::test::TempDir tmp;
  const auto train = rlx::test::start_rlx(
      train_args(tmp / "runs", {"--learners", "3"}), tmp / "train.out",
      {{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(free_port())}});
  const std::optional<rlx::ChildExit> exit = rlx::test::exit_within(*train, std::chrono::seconds(30));
  const std::string out = read_text_file((tmp / "train.out").string());
  INFO(out);
  REQUIRE(exit);
  CHECK(exit->describe() == "exit status 2");
  CHECK_THAT(out, Catch::Contains("num_learners is 3 but 2 learner ranks were started"));
  CHECK_FALSE(fs::exists(tmp / "runs"));
}
