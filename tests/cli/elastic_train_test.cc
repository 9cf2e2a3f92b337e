// `rlx train` with an elastic learner group (elastic: true), as a user runs it: a learner rank
// killed in the middle of an update costs the run one re-formed group and one redone update, not
// the run; a rank started later with `rlx learner --join-file` is taken in at an iteration
// boundary; the weights at the end are those of a run that lost nothing (the interrupted update
// was neither lost nor applied twice). Below min_learners the run checkpoints and stops.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint_dir.h"
#include "core/child_process.h"
#include "native/ppo_state_file.h"
#include "run_rlx.h"

using rlx::test::read_text_file;
using rlx::test::temp_dir;

namespace {

const std::string kExperiments = std::string(RLX_SOURCE_DIR) + "/experiments/";

// `rlx train cartpole-ppo.yaml` with 3 elastic learners for `iterations` iterations, seed 1.
std::vector<std::string> elastic_run(const std::string& out, const std::string& trial, int iterations,
                                     const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {"train", kExperiments + "cartpole-ppo.yaml", "--learners", "3", "--workers", "0",
                                   "--seed", "1", "--set", "elastic=true", "--set",
                                   "stop.training_iteration=" + std::to_string(iterations), "--set",
                                   "stop.episode_return_mean=null", "--trial-name", trial, "--output", out, "-q"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The learner rank child of `train` started as rank `rank` (its command line says --rank R).
pid_t rank_child(pid_t train, int rank) {
  for (const pid_t child : rlx::test::children_of(train)) {
    std::string cmdline = read_text_file("/proc/" + std::to_string(child) + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(" --rank " + std::to_string(rank) + " ") != std::string::npos) return child;
  }
  return 0;
}

// The parameters in a PPO checkpoint's learner file.
std::vector<float> checkpoint_params(const std::string& dir) {
  const rlx::Checkpoint checkpoint = rlx::read_checkpoint_dir(dir);
  const std::string& bytes = checkpoint.files.at(rlx::kPpoLearnerFile);
  uint64_t count = 0;
  REQUIRE(bytes.size() >= 16);
  std::memcpy(&count, bytes.data() + 8, sizeof(count));
  std::istringstream in(bytes);
  return rlx::read_ppo_learner_state(in, static_cast<int64_t>(count)).params;
}

// max |a - b| / max |a|.
double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double scale = 1e-12, diff = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::abs(a[i])));
    diff = std::max(diff, static_cast<double>(std::abs(a[i] - b[i])));
  }
  return diff / scale;
}

}  // namespace

TEST_CASE("An elastic rlx train survives a killed learner rank and takes a joining one in with the weights of a run that lost nothing",
          "[cli][dp][elastic]") {
  const std::string out = temp_dir("elastic_train");
  constexpr int kIterations = 6;
  const auto reference = rlx::test::run_rlx([&] {
    std::string line;
    for (const std::string& arg : elastic_run(out, "reference", kIterations)) line += arg + " ";
    return line;
  }());
  INFO(reference.out << reference.err);
  REQUIRE(reference.exit_code == 3);  // the iteration budget ended it

  // Rank 1 is a straggler (debug_slow_factor 20): its share of an update (160 minibatch steps)
  // takes seconds. Its log (debug level) says when it takes iteration 3's update command, so the
  // kill lands inside that update however long sampling took on a loaded machine.
  const std::string trial = out + "/cartpole-ppo/interrupted";
  const auto train = rlx::test::start_rlx(
      elastic_run(out, "interrupted", kIterations,
                  {"--set", "debug_slow_rank=1", "--set", "debug_slow_factor=20", "--log-level", "debug"}),
      out + "/train.log");
  const auto updates_taken = [&] {
    const std::string text = read_text_file(trial + "/logs/learner_rank_1.log");
    size_t count = 0;
    for (size_t at = text.find("ppo_update command"); at != std::string::npos; at = text.find("ppo_update command", at + 1)) ++count;
    return count;
  };
  REQUIRE(rlx::test::wait_for([&] { return updates_taken() >= 3; }, std::chrono::seconds(120)));
  REQUIRE(rlx::test::lines_in(trial + "/result.jsonl") == 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const pid_t rank1 = rank_child(train->pid(), 1);
  REQUIRE(rank1 > 0);
  ::kill(rank1, SIGKILL);
  const std::string driver_log = trial + "/logs/driver.log";
  REQUIRE(rlx::test::wait_for([&] { return read_text_file(driver_log).find("generation 2: 2 ranks") != std::string::npos; },
                              std::chrono::seconds(60)));
  // A replacement, as a requeued srun step would start it.
  const auto joiner = rlx::test::start_rlx({"learner", "--join-file", trial + "/learner_endpoint"}, out + "/join.log");
  const std::optional<rlx::ChildExit> ended = rlx::test::exit_within(*train, std::chrono::seconds(180));
  const std::string log = read_text_file(out + "/train.log") + read_text_file(driver_log);
  INFO(log);
  REQUIRE(ended.has_value());
  CHECK(ended->describe() == "exit status 3");
  const std::optional<rlx::ChildExit> joiner_ended = rlx::test::exit_within(*joiner, std::chrono::seconds(20));
  INFO(read_text_file(out + "/join.log"));
  REQUIRE(joiner_ended.has_value());
  CHECK(joiner_ended->describe() == "exit status 0");
  CHECK_THAT(read_text_file(out + "/join.log"), Catch::Contains("joined generation 3 of the elastic group as rank 2 of 3") &&
                                                    Catch::Contains("the driver said stop"));
  CHECK_THAT(log, Catch::Contains("learner group generation 1 failed: gloo") && Catch::Contains("re-forming it") &&
                      Catch::Contains("learner group: lost ticket") && Catch::Contains("joins at the iteration boundary"));

  // Every iteration once, in order, with its steps; the group's history in the results.
  const std::vector<nlohmann::json> rows = rlx::test::json_lines(read_text_file(trial + "/result.jsonl"));
  REQUIRE(rows.size() == kIterations);
  for (int i = 0; i < kIterations; ++i) {
    CHECK(rows[static_cast<size_t>(i)].at("training_iteration") == i + 1);
    CHECK(rows[static_cast<size_t>(i)].at("timesteps_total") == 1024 * (i + 1));
  }
  const nlohmann::json learner = nlohmann::json::parse(read_text_file(trial + "/result.json")).at("learner");
  INFO(learner.dump());
  CHECK(learner.at("generation") == 3);
  CHECK(learner.at("regroups") == 2);
  CHECK(learner.at("ranks_lost") == 1);
  CHECK(learner.at("ranks_joined") == 1);
  CHECK(learner.at("updates_redone") == 1);
  CHECK(learner.at("num_learners") == 3);

  // The update the kill cut short was undone and redone on the 2 ranks left: the weights are the
  // reference's up to float rounding (a partial update applied twice moves them ~1e-3).
  const std::string last = "/checkpoints/checkpoint_00000" + std::to_string(kIterations);
  const double difference =
      max_relative_difference(checkpoint_params(out + "/cartpole-ppo/reference" + last), checkpoint_params(trial + last));
  CHECK(difference < 2e-5);
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("An elastic group below min_learners checkpoints its last update and stops naming min_learners",
          "[cli][dp][elastic]") {
  const std::string out = temp_dir("elastic_min");
  const std::string trial = out + "/cartpole-ppo/t";
  const auto train = rlx::test::start_rlx(
      {"train", kExperiments + "cartpole-ppo.yaml", "--learners", "2", "--workers", "0", "--set", "elastic=true", "--set",
       "min_learners=2", "--set", "stop.timesteps_total=100000000", "--set", "stop.episode_return_mean=null", "--set",
       "debug_slow_rank=1", "--set", "debug_slow_factor=20", "--trial-name", "t", "--output", out, "-q"},
      out + "/train.log");
  REQUIRE(rlx::test::wait_for([&] { return rlx::test::lines_in(trial + "/result.jsonl") >= 2; }, std::chrono::seconds(120)));
  const pid_t rank1 = rank_child(train->pid(), 1);
  REQUIRE(rank1 > 0);
  ::kill(rank1, SIGKILL);
  const std::optional<rlx::ChildExit> ended = rlx::test::exit_within(*train, std::chrono::seconds(60));
  const std::string log = read_text_file(out + "/train.log");
  INFO(log);
  REQUIRE(ended.has_value());
  CHECK(ended->describe() == "exit status 1");
  CHECK_THAT(log, Catch::Contains("the elastic learner group is down to 1 ranks, fewer than min_learners 2"));
  const nlohmann::json result = nlohmann::json::parse(read_text_file(trial + "/result.json"));
  INFO(result.dump());
  CHECK(result.at("checkpoint_note") == "written after the failure");
  const std::string checkpoint = result.at("last_checkpoint").get<std::string>();
  CHECK(rlx::read_checkpoint_dir(checkpoint).manifest.at("counters").at("training_iteration") == result.at("training_iteration"));
  std::system(("rm -rf " + out).c_str());
}
