// Errors travel: a remote `rlx worker` whose Python env raises, or that cannot set up the run's
// env, tells its learner why before it exits. The learner prints the reason once with the worker's id and host, counts it in the
// results (sampler.workers_failed, sampler.worker_failures) and ends with a summary, while the
// run goes on with the workers left.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::read_text_file;

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

TEST_CASE("a remote worker's env error reaches the learner with its host and reason", "[cli][worker][failure]") {
  rlx::test::TempDir tmp;
  const fs::path experiment = tmp / "py.yaml";
  // The first worker process to reach step 40 raises (once_file); the other runs to the budget.
  rlx::test::write_text(experiment, "py:\n  env: python:bridge_envs:RaisesInStep\n  env_config: {at_step: 40, once_file: " +
                                        (tmp / "raised").string() + "}\n  python_path: [" + RLX_SOURCE_DIR +
                                        "/tests/envs/python]\n  algorithm: PPO\n  stop: {timesteps_total: 2048}\n"
                                        "  config: {num_workers: 0, num_envs_per_worker: 4, rollout_fragment_length: 64, "
                                        "train_batch_size: 512, minibatch_size: 128, num_epochs: 1, checkpoint_freq: 0}\n");
  const fs::path endpoint = tmp / "runs/py/t/endpoint";
  const auto worker = [&](const std::string& name, bool python_path) {
    std::vector<std::string> args = {"worker", "--connect-file", endpoint.string(), "--learner-timeout", "30"};
    if (python_path) args.insert(args.end(), {"--python-path", std::string(RLX_SOURCE_DIR) + "/tests/envs/python"});
    return rlx::test::start_rlx(args, tmp / (name + ".out"));
  };
  // Without --python-path this host cannot import the env: it fails setting up, before its hello.
  const auto misconfigured = worker("misconfigured", false);
  const auto first = worker("first", true);
  const auto second = worker("second", true);
  const auto train = rlx::test::start_rlx({"train", experiment.string(), "--bind", "tcp://127.0.0.1:*", "--trial-name",
                                           "t", "--output", (tmp / "runs").string(), "-q"},
                                          tmp / "train.out");
  const std::optional<rlx::ChildExit> train_exit = rlx::test::exit_within(*train, std::chrono::seconds(90));
  const std::optional<rlx::ChildExit> misconfigured_exit = rlx::test::exit_within(*misconfigured, std::chrono::seconds(20));
  const std::optional<rlx::ChildExit> first_exit = rlx::test::exit_within(*first, std::chrono::seconds(20));
  const std::optional<rlx::ChildExit> second_exit = rlx::test::exit_within(*second, std::chrono::seconds(20));
  const std::string learner_out = read_text_file((tmp / "train.out").string());
  INFO("train: " << learner_out << "\nmisconfigured: " << read_text_file((tmp / "misconfigured.out").string()) << "\nfirst: " << read_text_file((tmp / "first.out").string())
                 << "\nsecond: " << read_text_file((tmp / "second.out").string()));
  REQUIRE(train_exit);
  REQUIRE(misconfigured_exit);
  REQUIRE(first_exit);
  REQUIRE(second_exit);
  CHECK(train_exit->describe() == "exit status 3");  // the budget, reached by the worker left
  // One worker failed (exit status 1: a Python env's error), the other was stopped by the learner.
  CHECK(misconfigured_exit->describe() == "exit status 2");
  CHECK(((first_exit->describe() == "exit status 1") != (second_exit->describe() == "exit status 1")));

  const std::string reason = "python_error: python:bridge_envs:RaisesInStep: step raised RuntimeError: the env broke at step 40";
  CHECK_THAT(learner_out, Catch::Matches("(.|\\n)*worker \\d+ \\(pid \\d+ on " + host_name() + "\\) stopped: " + reason +
                                         " \\(action \\d\\)(.|\\n)*"));
  const std::string bad_config = "bad_config: python:bridge_envs:RaisesInStep: cannot import module 'bridge_envs' "
                                 "(No module named 'bridge_envs'); add its directory with --python-path DIR";
  CHECK_THAT(learner_out, Catch::Contains(" on " + host_name() + ") stopped: " + bad_config));
  CHECK_THAT(learner_out, Catch::Contains("2 workers failed in this run, for 2 distinct reasons:") &&
                              Catch::Contains("  1 x " + reason) && Catch::Contains("  1 x " + bad_config));
  const auto result = nlohmann::json::parse(read_text_file((tmp / "runs/py/t/result.json").string()));
  CHECK(result["sampler"]["workers_failed"] == 2);
  CHECK(result["sampler"]["worker_failures"] == nlohmann::json{{"bad_config", 1}, {"python_error", 1}});
  const std::vector<nlohmann::json> rows = rlx::test::json_lines(read_text_file((tmp / "runs/py/t/result.jsonl").string()));
  REQUIRE_FALSE(rows.empty());
  CHECK(rows.back()["sampler"]["workers_failed"] == 2);
}
