// rlx train's TensorBoard event files, read back by an independent reader: Python's protobuf
// (Debian's python3-protobuf) over the same .proto, with its own CRC-32C
// (tests/watch/read_tfevents.py), checked against progress.csv.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli/run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::CommandOutput;
using rlx::test::run_rlx;

struct ReadBack {
  int exit_code = -1;
  nlohmann::json result;
};

// Runs the independent reader over `trial` (with --compare-csv when `compare`).
ReadBack read_back(const fs::path& trial, bool compare) {
  const fs::path out = trial.parent_path() / "read_back.json";
  const std::string command = std::string(RLX_SYSTEM_PYTHON) + " " + RLX_SOURCE_DIR + "/tests/watch/read_tfevents.py " +
                              RLX_TENSORBOARD_PYTHON_DIR + " " + trial.string() + (compare ? " --compare-csv" : "") +
                              " >" + out.string();
  const int status = std::system(command.c_str());
  ReadBack r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string text = rlx::test::read_text_file(out.string());
  if (!text.empty()) r.result = nlohmann::json::parse(text);
  return r;
}

// Exit status of a run that stopped at its timesteps_total without reaching its reward target.
constexpr int kStoppedByTimesteps = 3;

// cartpole-ppo in-process with a fixed seed, a checkpoint every 4 iterations of 1024 steps.
CommandOutput train(const fs::path& runs, int64_t timesteps, const std::string& extra = "") {
  return run_rlx("train " + std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml --workers 0 --seed 1 "
                 "--set stop.timesteps_total=" + std::to_string(timesteps) + " --set checkpoint_freq=4 "
                 "--trial-name t --output " + runs.string() + " -q " + extra);
}

std::vector<fs::path> event_files(const fs::path& trial) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(trial)) {
    if (entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0) files.push_back(entry.path());
  }
  return files;
}

}  // namespace

TEST_CASE("rlx train's event files read back as progress.csv, with the hyperparameters", "[watch][tensorboard]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs" / "cartpole-ppo" / "t";
  const CommandOutput run = train(tmp / "runs", 8192);
  INFO(run.err);
  REQUIRE(run.exit_code == kStoppedByTimesteps);
  REQUIRE(event_files(trial).size() == 1);

  const ReadBack r = read_back(trial, true);
  INFO(r.result.dump());
  REQUIRE(r.exit_code == 0);
  CHECK(r.result.at("errors").empty());
  CHECK(r.result.at("versions") == nlohmann::json::array({"brain.Event:2"}));
  CHECK(r.result.at("records") == 2 + 8);  // file_version, hyperparameters, one per iteration
  CHECK(r.result.at("scalars").size() == 8);
  CHECK(r.result.at("compared").get<int>() >= 8 * 20);
  CHECK(r.result.at("scalars").at("8192").contains("episode/return_mean"));
  CHECK(r.result.at("scalars").at("8192").contains("learner/policy_loss"));
  CHECK(r.result.at("scalars").at("8192").contains("perf/env_steps_per_s"));
  const std::string hyperparameters = r.result.at("texts").at("hyperparameters").get<std::string>();
  CHECK(hyperparameters.find("| config/lr | 0.001 |") != std::string::npos);
  CHECK(hyperparameters.find("| env | CartPole-v1 |") != std::string::npos);
}

TEST_CASE("a resumed run writes a new event file that starts a session at the checkpoint's step",
          "[watch][tensorboard]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs" / "cartpole-ppo" / "t";
  REQUIRE(train(tmp / "runs", 8192).exit_code == kStoppedByTimesteps);
  const CommandOutput resumed =
      train(tmp / "runs", 12288, "--resume " + (trial / "checkpoints" / "checkpoint_000004").string());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == kStoppedByTimesteps);
  CHECK(event_files(trial).size() == 2);
  const ReadBack r = read_back(trial, true);
  INFO(r.result.dump());
  CHECK(r.exit_code == 0);
  CHECK(r.result.at("session_starts") == nlohmann::json::array({4096}));
  CHECK(r.result.at("scalars").size() == 12);
}

TEST_CASE("a torn last record is left out by the reader and a damaged one is refused", "[watch][tensorboard]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs" / "cartpole-ppo" / "t";
  REQUIRE(train(tmp / "runs", 4096).exit_code == kStoppedByTimesteps);
  const fs::path events = event_files(trial).at(0);
  const auto size = fs::file_size(events);

  fs::resize_file(events, size - 7);  // what a crash in the middle of the last write leaves
  const ReadBack torn = read_back(trial, false);
  INFO(torn.result.dump());
  CHECK(torn.exit_code == 0);
  CHECK(torn.result.at("records") == 2 + 4 - 1);
  CHECK(torn.result.at("torn").size() == 1);

  {
    std::fstream file(events, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 2));
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(static_cast<std::streamoff>(size / 2));
    byte = static_cast<char>(byte ^ 0x20);
    file.write(&byte, 1);
  }
  const ReadBack damaged = read_back(trial, false);
  CHECK(damaged.exit_code == 1);
  CHECK(damaged.result.at("errors").at(0).get<std::string>().find("checksum") != std::string::npos);
}

TEST_CASE("tensorboard: false writes no event file", "[watch][tensorboard]") {
  rlx::test::TempDir tmp;
  const fs::path trial = tmp / "runs" / "cartpole-ppo" / "t";
  REQUIRE(train(tmp / "runs", 2048, "--set tensorboard=false").exit_code == kStoppedByTimesteps);
  CHECK(fs::exists(trial / "progress.csv"));
  CHECK(event_files(trial).empty());
}
