// `rlx worker --connect-file FILE`: a worker started before its learner waits for the endpoint
// file that `rlx train --bind tcp://...` writes into the trial, joins the run, and exits 0 when
// the learner stops it. Conflicting flags and a file that names no endpoint are usage errors.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::read_text_file;

}  // namespace

TEST_CASE("rlx worker --connect-file waits for the learner to write its endpoint and joins its run",
          "[cli][worker]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs/cartpole-ppo/x";
  const fs::path worker_log = tmp / "worker.out";
  const auto worker = rlx::test::start_rlx(
      {"worker", "--connect-file", (trial / "endpoint").string(), "--learner-timeout", "30"}, worker_log);
  REQUIRE(rlx::test::wait_for(
      [&] { return read_text_file(worker_log.string()).find("waiting for the learner to write its endpoint to") !=
                   std::string::npos; },
      std::chrono::seconds(20)));
  CHECK_FALSE(worker->poll());

  // --workers 0 with a --bind: remote workers only, so the run needs the waiting worker.
  const auto train = rlx::test::start_rlx({"train", std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml",
                                           "--workers", "0", "--bind", "tcp://127.0.0.1:*", "--set",
                                           "stop.timesteps_total=2048", "--trial-name", "x", "--output",
                                           (tmp / "runs").string(), "-q"},
                                          tmp / "train.out");
  const std::optional<rlx::ChildExit> train_exit = rlx::test::exit_within(*train, std::chrono::seconds(60));
  const std::optional<rlx::ChildExit> worker_exit = rlx::test::exit_within(*worker, std::chrono::seconds(20));
  INFO("train: " << read_text_file((tmp / "train.out").string()) << "\nworker: " << read_text_file(worker_log.string()));
  REQUIRE(train_exit);
  REQUIRE(worker_exit);
  CHECK(train_exit->describe() == "exit status 3");  // the budget
  CHECK(worker_exit->describe() == "exit status 0");
  const std::string endpoint = read_text_file((trial / "endpoint").string());
  CHECK_THAT(endpoint, Catch::Matches(R"(tcp://127\.0\.0\.1:\d+\n?)"));
  const std::string worker_out = read_text_file(worker_log.string());
  CHECK_THAT(worker_out, Catch::Contains("joined the learner at " + endpoint.substr(0, endpoint.find('\n'))) &&
                             Catch::Contains("stopped by the learner"));
  const auto result = nlohmann::json::parse(read_text_file((trial / "result.json").string()));
  CHECK(result["timesteps_total"] == 2048);
  CHECK(result["sampler"]["workers_joined"] == 1);
  CHECK(result["sampler"]["fragments_refused"] == 0);
}

TEST_CASE("rlx worker takes one of --connect and --connect-file", "[cli][worker]") {
  rlx::test::TempDir tmp;
  rlx::test::CommandOutput r =
      rlx::test::run_rlx("worker --connect tcp://127.0.0.1:1 --connect-file " + (tmp / "endpoint").string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("give one of --connect ENDPOINT and --connect-file FILE"));
  r = rlx::test::run_rlx("worker --envs 1");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("give one of --connect ENDPOINT and --connect-file FILE"));
}

TEST_CASE("rlx worker --connect-file refuses a file that names no endpoint, naming the file", "[cli][worker]") {
  rlx::test::TempDir tmp;
  const fs::path file = tmp / "endpoint";
  rlx::test::write_text(file, "head:5555\n");
  const rlx::test::CommandOutput r =
      rlx::test::run_rlx("worker --connect-file " + file.string() + " --learner-timeout 5");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(file.string() + ": \"head:5555\" is not a tcp:// or ipc:// endpoint"));
}

TEST_CASE("rlx worker --connect-file gives up after --learner-timeout when no endpoint appears", "[cli][worker]") {
  rlx::test::TempDir tmp;
  const fs::path file = tmp / "runs/never/endpoint";
  const rlx::test::CommandOutput r = rlx::test::run_rlx("worker --connect-file " + file.string() + " --learner-timeout 1");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("no learner endpoint appeared in " + file.string() + " within 1 s (--learner-timeout)"));
}

TEST_CASE("rlx worker --connect-file follows a learner that was killed and started again at another address",
          "[cli][worker]") {
  rlx::test::TempDir tmp;
  const fs::path endpoint_file = tmp / "learner.endpoint";
  const fs::path worker_log = tmp / "worker.out";
  const auto learner = [&](const std::string& trial, const std::string& budget) {
    return rlx::test::start_rlx({"train", std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml", "--workers",
                                 "0", "--bind", "tcp://127.0.0.1:*", "--endpoint-file", endpoint_file.string(), "--set",
                                 "stop.timesteps_total=" + budget, "--trial-name", trial, "--output",
                                 (tmp / "runs").string(), "-q"},
                                tmp / (trial + ".out"));
  };
  const auto first = learner("first", "100000000");
  const auto worker = rlx::test::start_rlx(
      {"worker", "--connect-file", endpoint_file.string(), "--learner-timeout", "60"}, worker_log);
  REQUIRE(rlx::test::wait_for(
      [&] { return read_text_file(worker_log.string()).find("joined the learner") != std::string::npos; },
      std::chrono::seconds(30)));
  const std::string first_endpoint = read_text_file(endpoint_file.string());
  first->kill();  // a crashed head: it says nothing to its workers

  const auto second = learner("second", "2048");
  const std::optional<rlx::ChildExit> second_exit = rlx::test::exit_within(*second, std::chrono::seconds(60));
  const std::optional<rlx::ChildExit> worker_exit = rlx::test::exit_within(*worker, std::chrono::seconds(20));
  const std::string worker_out = read_text_file(worker_log.string());
  INFO("worker: " << worker_out << "\nsecond: " << read_text_file((tmp / "second.out").string()));
  REQUIRE(second_exit);
  REQUIRE(worker_exit);
  const std::string second_endpoint = read_text_file(endpoint_file.string());
  CHECK(second_endpoint != first_endpoint);
  CHECK(second_exit->describe() == "exit status 3");  // the budget, reached with the worker that followed
  CHECK(worker_exit->describe() == "exit status 0");
  CHECK_THAT(worker_out, Catch::Contains("the learner's endpoint is now " + second_endpoint.substr(0, second_endpoint.find('\n'))) &&
                             Catch::Contains("joined again") && Catch::Contains("stopped by the learner"));
}
