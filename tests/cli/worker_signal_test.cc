// `rlx worker` stopped by a signal, as a scheduler stops a job step: it says goodbye to the
// learner (which counts it as a worker that left, not one that vanished), prints its last line
// with what it sent, and exits 6 (stopped by a signal). Every fragment it says it sent reached
// the learner, so a job's output still adds up across a SIGTERM.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::read_text_file;

}  // namespace

TEST_CASE("rlx worker on SIGTERM says goodbye and prints its last line and the learner counts it as left",
          "[cli][worker]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs/cartpole-ppo/x";
  // Remote workers only (--workers 0 with a --bind), and a budget far beyond the test.
  const auto train = rlx::test::start_rlx({"train", std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml",
                                           "--workers", "0", "--bind", "tcp://127.0.0.1:*", "--set",
                                           "stop.timesteps_total=100000000", "--set", "stop.episode_return_mean=null",
                                           "--trial-name", "x", "--output", (tmp / "runs").string(), "-q"},
                                          tmp / "train.out");
  const fs::path worker_log = tmp / "worker.out";
  const auto worker = rlx::test::start_rlx(
      {"worker", "--connect-file", (trial / "endpoint").string(), "--learner-timeout", "30"}, worker_log);
  REQUIRE(rlx::test::wait_for([&] { return rlx::test::lines_in((trial / "result.jsonl").string()) >= 3; },
                              std::chrono::seconds(60)));
  ::kill(worker->pid(), SIGTERM);
  const std::optional<rlx::ChildExit> worker_exit = rlx::test::exit_within(*worker, std::chrono::seconds(20));
  const std::string worker_out = read_text_file(worker_log.string());
  INFO("worker: " << worker_out);
  REQUIRE(worker_exit);
  CHECK(worker_exit->describe() == "exit status 6");
  std::smatch sent;
  REQUIRE(std::regex_search(worker_out, sent, std::regex(R"(stopped by SIGTERM \(fragments_sent=(\d+) )")));

  // The goodbye left before the worker exited (its socket lingers until it is sent); give the
  // learner's receiver a moment to take it, then stop the run.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ::kill(train->pid(), SIGTERM);
  const std::optional<rlx::ChildExit> train_exit = rlx::test::exit_within(*train, std::chrono::seconds(60));
  INFO("train: " << read_text_file((tmp / "train.out").string()));
  REQUIRE(train_exit);
  CHECK(train_exit->describe() == "exit status 6");
  const auto sampler = nlohmann::json::parse(read_text_file((trial / "result.json").string())).at("sampler");
  INFO(sampler.dump());
  CHECK(sampler.at("workers_left") == 1);
  CHECK(sampler.at("workers_lost") == 0);
  CHECK(sampler.at("fragments_received") == std::stoull(sent[1].str()));
}
