// Hard stops of `rlx train` as a cluster or a user makes them: SIGTERM (a scheduler's preemption,
// its workers signalled too), SIGINT twice, a run killed mid-write, with and without the local
// workers' temporary CURVE keys. Each leaves a run that resumes, and no secret behind.
#include <catch2/catch.hpp>

#include <algorithm>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint_dir.h"
#include "core/child_process.h"
#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::children_of;
using rlx::test::read_text_file;
using rlx::test::run_rlx;
using rlx::test::wait_for;
using Clock = std::chrono::steady_clock;

// PPO iterations of 256 steps.
const std::string kSmallIterations = "num_envs_per_worker: 4, rollout_fragment_length: 64, minibatch_size: 128, num_epochs: 1";

// An experiment that would run for hours unless stopped, with the misbehaving test plugin's envs.
fs::path write_experiment(const rlx::test::TempDir& tmp, const std::string& env = "CartPole-v1",
                          const std::string& config = kSmallIterations) {
  const fs::path file = tmp / "stop.yaml";
  rlx::test::write_text(file, "stop-test:\n  env: " + env + "\n  algorithm: PPO\n  stop: {training_iteration: 1000000}\n"
                              "  plugins: [" + std::string(RLX_TEST_PLUGIN_MISBEHAVING) + "]\n"
                              "  config: {num_workers: 0, checkpoint_freq: 0, " + config + "}\n");
  return file;
}

int64_t rows_in(const fs::path& file) { return rlx::test::lines_in(file.string()); }

// `rlx train` of tmp's experiment into tmp/runs, trial "t", as a process of its own (with TMPDIR
// set to `temp_root` when given); its output goes to tmp/train.log.
std::unique_ptr<rlx::ChildProcess> start_train(const rlx::test::TempDir& tmp, const fs::path& experiment,
                                               const std::vector<std::string>& args, const fs::path& temp_root = {}) {
  std::vector<std::string> argv = {"/usr/bin/env"};
  if (!temp_root.empty()) argv.push_back("TMPDIR=" + temp_root.string());
  for (const std::string& arg : {std::string(RLX_BINARY_DIR) + "/rlx", std::string("train"), experiment.string(),
                                 std::string("--output"), (tmp / "runs").string(), std::string("--trial-name"),
                                 std::string("t"), std::string("-q")}) {
    argv.push_back(arg);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  fs::remove(tmp / "train.log");
  return std::make_unique<rlx::ChildProcess>(argv, tmp / "train.log");
}

rlx::ChildExit wait_exit(rlx::ChildProcess& process, std::chrono::seconds limit) {
  REQUIRE(wait_for([&] { return process.poll().has_value(); }, limit));
  return *process.poll();
}

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(read_text_file(path.string())); }

}  // namespace

TEST_CASE("SIGTERM stops rlx train after its iteration with a checkpoint and result.json, exit 6, and --resume continues",
          "[cli][stop]") {
  for (const int workers : {0, 2}) {
    INFO("workers " << workers);
    rlx::test::TempDir tmp;
    const fs::path trial = tmp / "runs/stop-test/t";
    auto train = start_train(tmp, write_experiment(tmp), {"--workers", std::to_string(workers)});
    REQUIRE(wait_for([&] { return rows_in(trial / "result.jsonl") >= 3; }, std::chrono::seconds(60)));
    // A scheduler's preemption signals every process of the job: the workers die of it too.
    std::vector<pid_t> targets = {train->pid()};
    for (pid_t worker : children_of(train->pid())) targets.push_back(worker);
    CHECK(targets.size() == static_cast<size_t>(1 + workers));
    for (pid_t pid : targets) ::kill(pid, SIGTERM);
    const rlx::ChildExit exit = wait_exit(*train, std::chrono::seconds(60));
    const std::string log = read_text_file((tmp / "train.log").string());
    INFO(log);
    CHECK(exit.describe() == "exit status 6");
    CHECK_THAT(log, Catch::Contains("rlx: SIGTERM: finishing the current iteration"));
    const nlohmann::json result = read_json(trial / "result.json");
    INFO(result.dump());
    CHECK(result.at("stopped_by") == "signal");
    CHECK(result.at("signal") == "SIGTERM");
    const int64_t iteration = result.at("training_iteration").get<int64_t>();
    CHECK(iteration == rows_in(trial / "result.jsonl"));  // the last row is the last complete iteration
    const fs::path checkpoint = rlx::checkpoint_path(trial, iteration);
    CHECK(result.at("last_checkpoint") == checkpoint.string());
    CHECK(rlx::read_checkpoint_dir(checkpoint).manifest.at("counters").at("training_iteration") == iteration);

    const auto resumed = run_rlx("train --resume " + checkpoint.string() + " --set stop.training_iteration=" +
                                 std::to_string(iteration + 2) + " -q");
    INFO(resumed.out << resumed.err);
    CHECK(resumed.exit_code == 3);
    CHECK(read_json(trial / "result.json").at("training_iteration") == iteration + 2);
    std::istringstream rows(read_text_file((trial / "result.jsonl").string()));
    int64_t expected = 1;  // one row per iteration, none lost or repeated
    for (std::string line; std::getline(rows, line);) CHECK(nlohmann::json::parse(line).at("training_iteration") == expected++);
    CHECK(expected == iteration + 3);
  }
}

TEST_CASE("A second SIGINT stops rlx train at once, by the signal, with no graceful end", "[cli][stop]") {
  rlx::test::TempDir tmp;
  // Iterations of 2,000,000 steps: far longer than the test waits between the two signals.
  auto train = start_train(tmp, write_experiment(tmp, "CartPole-v1", "train_batch_size: 2000000, minibatch_size: 200000"), {});
  REQUIRE(wait_for([&] { return fs::exists(tmp / "runs/stop-test/t/params.yaml"); }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(train->pid(), SIGINT);
  REQUIRE(wait_for([&] { return read_text_file((tmp / "train.log").string()).find("rlx: SIGINT:") != std::string::npos; },
                   std::chrono::seconds(10)));
  ::kill(train->pid(), SIGINT);
  const rlx::ChildExit exit = wait_exit(*train, std::chrono::seconds(10));
  INFO(read_text_file((tmp / "train.log").string()));
  CHECK(exit.describe() == rlx::ChildExit{true, SIGINT}.describe());
  CHECK_FALSE(fs::exists(tmp / "runs/stop-test/t/result.json"));
  CHECK(rows_in(tmp / "runs/stop-test/t/result.jsonl") == 0);
}

TEST_CASE("With --auth-keys the local workers' key directory is gone after SIGTERM, a second signal and a failure",
          "[cli][stop]") {
  rlx::test::TempDir tmp;
  REQUIRE(run_rlx("keys init " + (tmp / "keys").string()).exit_code == 0);
  const fs::path temp_root = tmp / "tmp";
  const auto temp_entries = [&] { return rlx::test::names_in(temp_root); };
  const std::vector<std::string> keyed = {"--workers", "1", "--auth-keys", (tmp / "keys").string()};
  for (const int signals : {1, 2}) {
    INFO(signals << " SIGTERM(s)");
    fs::remove_all(tmp / "runs");
    fs::create_directories(temp_root);
    // For two signals, iterations long enough that the first stop cannot end before the second.
    const std::string config = signals == 1 ? kSmallIterations : "train_batch_size: 2000000, minibatch_size: 200000";
    auto train = start_train(tmp, write_experiment(tmp, "CartPole-v1", config), keyed, temp_root);
    REQUIRE(wait_for([&] { return rows_in(tmp / "runs/stop-test/t/result.jsonl") >= 2 ||
                                  (signals == 2 && fs::exists(tmp / "runs/stop-test/t/logs/worker_1.log")); },
                     std::chrono::seconds(60)));
    // While the run lasts: the key directory, and the private directory of the workers' socket.
    std::vector<std::string> entries = temp_entries();
    std::sort(entries.begin(), entries.end());
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].rfind("rlx-local-worker-keys-", 0) == 0);
    CHECK(entries[1].rfind("rlx-run-", 0) == 0);
    ::kill(train->pid(), SIGTERM);
    if (signals == 2) {  // once the first is taken (two pending ones would merge into one)
      REQUIRE(wait_for([&] { return read_text_file((tmp / "train.log").string()).find("rlx: SIGTERM:") != std::string::npos; },
                       std::chrono::seconds(10)));
      ::kill(train->pid(), SIGTERM);
    }
    const rlx::ChildExit exit = wait_exit(*train, std::chrono::seconds(60));
    INFO(read_text_file((tmp / "train.log").string()));
    CHECK(exit.describe() == (signals == 1 ? "exit status 6" : rlx::ChildExit{true, SIGTERM}.describe()));
    CHECK(temp_entries().empty());
  }
  // A failure: the only worker crashes and the restart budget is 0.
  fs::remove_all(tmp / "runs");
  auto train = start_train(tmp, write_experiment(tmp, "Crash-v0", kSmallIterations + ", max_worker_restarts: 0"), keyed,
                           temp_root);
  const rlx::ChildExit exit = wait_exit(*train, std::chrono::seconds(60));
  INFO(read_text_file((tmp / "train.log").string()));
  CHECK(exit.describe() == "exit status 1");
  CHECK(temp_entries().empty());
}

TEST_CASE("Resuming cleans what a killed run left: temporary checkpoint dirs and files, torn last lines", "[cli][stop]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs/stop-test/t";
  const fs::path experiment = write_experiment(tmp);
  auto r = run_rlx("train " + experiment.string() + " --output " + (tmp / "runs").string() +
                   " --trial-name t -q --set stop.training_iteration=3");
  REQUIRE(r.exit_code == 3);
  // A SIGKILL during the write of checkpoint 4 and of result.json, and a disk that filled mid-row.
  fs::create_directories(trial / "checkpoints/checkpoint_000004.tmp-a1B2c3");
  rlx::test::write_text(trial / "checkpoints/checkpoint_000004.tmp-a1B2c3/model_and_optimizer.pt", "half");
  rlx::test::write_text(trial / ".result.json.tmp-Zx9yQ1", "{\"training_iter");
  std::ofstream(trial / "result.jsonl", std::ios::app) << "{\"training_iteration\": 4, \"timest";
  std::ofstream(trial / "progress.csv", std::ios::app) << "4,1024,0.";
  r = run_rlx("train --resume " + rlx::checkpoint_path(trial, 3).string() + " --set stop.training_iteration=5 -q");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  CHECK(rlx::test::names_in(trial / "checkpoints") ==
        std::vector<std::string>{"checkpoint_000003", "checkpoint_000005"});
  CHECK_FALSE(fs::exists(trial / ".result.json.tmp-Zx9yQ1"));
  std::istringstream rows(read_text_file((trial / "result.jsonl").string()));
  int64_t expected = 1;
  for (std::string line; std::getline(rows, line);) CHECK(nlohmann::json::parse(line).at("training_iteration") == expected++);
  CHECK(expected == 6);
  std::istringstream csv(read_text_file((trial / "progress.csv").string()));
  std::string header;
  std::getline(csv, header);
  int64_t lines = 0;
  for (std::string line; std::getline(csv, line); ++lines) {
    CHECK(std::count(line.begin(), line.end(), ',') == std::count(header.begin(), header.end(), ','));
    CHECK(line.rfind(std::to_string(lines + 1) + ",", 0) == 0);
  }
  CHECK(lines == 5);
}

TEST_CASE("rlx train --resume and rlx evaluate refuse a checkpoint with a flipped byte in checkpoint.json, exit 2",
          "[cli][stop]") {
  rlx::test::TempDir tmp;
  auto r = run_rlx("train " + write_experiment(tmp).string() + " --output " + (tmp / "runs").string() +
                   " --trial-name t -q --set stop.training_iteration=1");
  REQUIRE(r.exit_code == 3);
  const fs::path checkpoint = rlx::checkpoint_path(tmp / "runs/stop-test/t", 1);
  std::string manifest = read_text_file((checkpoint / "checkpoint.json").string());
  const size_t lr = manifest.find("\"lr\": ");
  REQUIRE(lr != std::string::npos);
  const size_t digit = manifest.find_first_of(",\n", lr) - 1;
  manifest[digit] = manifest[digit] == '1' ? '2' : '1';  // another learning rate, still valid JSON
  rlx::test::write_text(checkpoint / "checkpoint.json", manifest);
  for (const std::string& command : {"train --resume " + checkpoint.string() + " -q", "evaluate " + checkpoint.string()}) {
    r = run_rlx(command);
    INFO(command << ": " << r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(checkpoint.string()) &&
                          Catch::Contains("checkpoint.json does not match its SHA-256 in checkpoint.json.sha256"));
  }
}
