#include <catch2/catch.hpp>

#include <cmath>

#include "core/atomic_file.h"
#include "core/results.h"
#include "tests/core/test_util.h"

using namespace rlx;
using rlx::test::TempDir;
namespace fs = std::filesystem;

namespace {

nlohmann::json row(int iteration) {
  return {{"training_iteration", iteration},
          {"timesteps_total", iteration * 1000},
          {"time_total_s", iteration * 1.5},
          {"episodes_total", iteration * 3},
          {"episode_return_mean", 10.0 * iteration},
          {"episode_len_mean", 20.0},
          {"env_steps_per_s", 5000.5},
          {"policy_loss", -0.01 * iteration},
          {"learner", {{"kl", 0.02}}},
          {"algorithm", "PPO, clipped"}};
}

std::vector<std::string> lines(const fs::path& path) {
  std::vector<std::string> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("ResultsWriter writes rows to result.jsonl and progress.csv", "[core][results]") {
  TempDir dir;
  const fs::path trial = dir / "cartpole-ppo/trial_0";
  ResultsWriter writer(trial);
  writer.write_params("cartpole-ppo:\n  env: CartPole-v1\n");
  CHECK(read_file(trial / "params.yaml") == "cartpole-ppo:\n  env: CartPole-v1\n");
  writer.append(row(1));
  nlohmann::json second = row(2);
  second["new_metric"] = 7;                                    // not in the header: jsonl only
  second["episode_return_mean"] = std::nan("");                // no episode finished yet
  second.erase("policy_loss");                                 // missing: empty cell
  writer.append(second);

  const auto csv = lines(trial / "progress.csv");
  REQUIRE(csv.size() == 3);
  CHECK(csv[0] ==
        "training_iteration,timesteps_total,time_total_s,episodes_total,episode_return_mean,episode_return_min,"
        "episode_return_max,episode_len_mean,env_steps_per_s,algorithm,learner/kl,policy_loss");
  CHECK(csv[1] == "1,1000,1.5,3,10.0,,,20.0,5000.5,\"PPO, clipped\",0.02,-0.01");
  CHECK(csv[2] == "2,2000,3.0,6,nan,,,20.0,5000.5,\"PPO, clipped\",0.02,");
  CHECK(parse_csv_line(csv[1])[9] == "PPO, clipped");
  CHECK(writer.csv_columns().size() == 12);

  const auto jsonl = lines(trial / "result.jsonl");
  REQUIRE(jsonl.size() == 2);
  CHECK(nlohmann::json::parse(jsonl[0]) == row(1));
  CHECK(nlohmann::json::parse(jsonl[1])["new_metric"] == 7);
  CHECK(nlohmann::json::parse(jsonl[1])["episode_return_mean"].is_null());
  CHECK_THROWS_AS(writer.append(nlohmann::json::array()), std::invalid_argument);
}

TEST_CASE("ResultsWriter writes result.json with the final row", "[core][results]") {
  TempDir dir;
  ResultsWriter writer(dir.path());
  writer.write_final(false, std::nullopt);
  auto result = nlohmann::json::parse(read_file(dir / "result.json"));
  CHECK(result["stop_reached"] == false);
  CHECK(result["last_checkpoint"].is_null());
  writer.append(row(1));
  writer.append(row(2));
  writer.write_final(true, dir / "checkpoints/checkpoint_000002");
  result = nlohmann::json::parse(read_file(dir / "result.json"));
  CHECK(result["training_iteration"] == 2);
  CHECK(result["timesteps_total"] == 2000);
  CHECK(result["stop_reached"] == true);
  CHECK(result["last_checkpoint"] == (dir / "checkpoints/checkpoint_000002").string());
}

TEST_CASE("ResultsWriter resumes: same header, appended rows, partial lines dropped", "[core][results]") {
  TempDir dir;
  {
    ResultsWriter writer(dir.path());
    writer.append(row(1));
    writer.append(row(2));
  }
  // A crash in the middle of an append leaves a partial line.
  std::ofstream(dir / "result.jsonl", std::ios::app) << "{\"training_iter";
  nlohmann::json third = row(3);
  third["extra"] = 1.0;  // a key the header lacks
  {
    ResultsWriter writer(dir.path());
    CHECK(writer.csv_columns().size() == 12);
    CHECK(writer.last_row()["training_iteration"] == 2);
    writer.append(third);
  }
  const auto csv = lines(dir / "progress.csv");
  REQUIRE(csv.size() == 4);
  CHECK(csv[3].rfind("3,3000,4.5,", 0) == 0);
  CHECK(parse_csv_line(csv[3]).size() == 12);
  const auto jsonl = lines(dir / "result.jsonl");
  REQUIRE(jsonl.size() == 3);
  CHECK(nlohmann::json::parse(jsonl[2]) == third);
}

TEST_CASE("ResultsWriter keeps a row in both files or in neither when a write fails", "[core][results]") {
  TempDir dir;
  ResultsWriter writer(dir.path());
  writer.append(row(1));
  const std::string jsonl = read_file(dir / "result.jsonl");
  // progress.csv cannot take the next row (here: a directory stands in its place).
  const std::string csv = read_file(dir / "progress.csv");
  fs::remove(dir / "progress.csv");
  fs::create_directory(dir / "progress.csv");
  CHECK_THROWS_AS(writer.append(row(2)), std::system_error);
  CHECK(read_file(dir / "result.jsonl") == jsonl);
  CHECK(writer.last_row() == row(1));
  fs::remove(dir / "progress.csv");
  rlx::test::write_text(dir / "progress.csv", csv);
  writer.append(row(2));
  CHECK(lines(dir / "result.jsonl").size() == 2);
  CHECK(lines(dir / "progress.csv").size() == 3);
}

TEST_CASE("ResultsWriter drops rows after the iteration a run resumes from", "[core][results]") {
  TempDir dir;
  ResultsWriter writer(dir.path());
  for (int i = 1; i <= 5; ++i) writer.append(row(i));
  writer.truncate_after(3);
  CHECK(lines(dir / "result.jsonl").size() == 3);
  CHECK(lines(dir / "progress.csv").size() == 4);
  CHECK(writer.last_row()["training_iteration"] == 3);
  writer.append(row(4));
  const auto csv = lines(dir / "progress.csv");
  REQUIRE(csv.size() == 5);
  CHECK(csv[4].rfind("4,4000,", 0) == 0);
}
