// `rlx train` of multi-agent envs from a C++ plugin and from a PettingZoo-style Python class, with
// several policies, one of them frozen: per-policy columns, checkpoint files and resume.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "core/checkpoint_dir.h"
#include "core/file_read.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::run_rlx;

const char* kConfig =
    "  config: {num_workers: 0, num_envs_per_worker: 2, rollout_fragment_length: 4, train_batch_size: 32, "
    "minibatch_size: 16, num_epochs: 2, checkpoint_freq: 2}\n";

// The last row of the trial's result.jsonl.
nlohmann::json last_row(const fs::path& trial) {
  const std::string text = rlx::read_file(trial / "result.jsonl");
  const size_t end = text.find_last_not_of('\n');
  const size_t start = text.rfind('\n', end);
  return nlohmann::json::parse(text.substr(start == std::string::npos ? 0 : start + 1, end + 1));
}

// Trains `file` (with `flags`, e.g. worker processes) for 3 iterations into tmp/runs/NAME/t (exit
// 3: the budget ended it) and checks that `trained` learned, `frozen` only acted, and the
// checkpoint holds both.
void check_trains(const rlx::test::TempDir& tmp, const fs::path& file, const std::string& name, const std::string& trained,
                  const std::string& frozen, const std::string& flags = "") {
  const auto r = run_rlx("train " + file.string() + " --output " + (tmp / "runs").string() + " --trial-name t -q " + flags);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  const fs::path trial = tmp / "runs" / name / "t";
  const nlohmann::json row = last_row(trial);
  CHECK(row["training_iteration"] == 3);
  CHECK(row["policy"][trained]["learner"]["policy_version"] == 4);
  CHECK_FALSE(row["policy"][frozen].contains("learner"));
  CHECK(row["policy"][frozen]["agent_steps_sampled"].get<int64_t>() > 0);
  CHECK(row["num_agent_steps_sampled"].get<int64_t>() > 0);
  const rlx::Checkpoint checkpoint = rlx::read_checkpoint_dir(trial / "checkpoints" / "checkpoint_000003");
  CHECK(checkpoint.files.count("policy." + trained + ".ppo_learner.bin") == 1);
  CHECK(checkpoint.files.count("policy." + frozen + ".ppo_learner.bin") == 1);

  // rlx evaluate gives each policy's and agent's return; rlx export writes the policy asked for.
  const fs::path checkpoint_dir = trial / "checkpoints" / "checkpoint_000003";
  const auto evaluated = run_rlx("evaluate " + checkpoint_dir.string() + " --episodes 3");
  INFO(evaluated.out << evaluated.err);
  REQUIRE(evaluated.exit_code == 0);
  const nlohmann::json summary = nlohmann::json::parse(evaluated.out.substr(evaluated.out.rfind("\n{") + 1));
  CHECK(summary["episodes"] == 3);
  CHECK(summary["policy_return_means"].contains(trained));
  CHECK(summary["policy_return_means"].contains(frozen));
  const auto unnamed = run_rlx("export " + checkpoint_dir.string() + " -o " + (tmp / "p.rlxp").string());
  CHECK(unnamed.exit_code == 2);
  CHECK_THAT(unnamed.err, Catch::Contains("pick one with --policy NAME"));
  const auto exported = run_rlx("export " + checkpoint_dir.string() + " --policy " + frozen + " -o " + (tmp / "p.rlxp").string());
  INFO(exported.err);
  CHECK(exported.exit_code == 0);
  CHECK(fs::file_size(tmp / "p.rlxp") > 0);

  // Resume carries on with every policy.
  const auto resumed = run_rlx("train --resume " + (trial / "checkpoints" / "checkpoint_000002").string() +
                               " --set stop.training_iteration=4 -q " + flags);
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 3);
  CHECK(last_row(trial)["policy"][trained]["learner"]["policy_version"] == 5);  // 1 + 2 updates before the checkpoint + 2 after
}

// The C++ plugin's two-player env: `mover` trains, `waiter` (another model) is frozen.
fs::path write_turns(const rlx::test::TempDir& tmp) {
  const fs::path file = tmp / "turns.yaml";
  rlx::test::write_text(file, std::string("turns:\n  env: PluginTurns-v0\n  plugins: [") + RLX_TEST_PLUGIN_MULTI_AGENT +
                                  "]\n  algorithm: PPO\n  stop: {training_iteration: 3}\n" + kConfig +
                                  "  policies: {mover: {}, waiter: {hidden_sizes: [8]}}\n"
                                  "  policy_mapping: {first: mover, second: waiter}\n"
                                  "  policies_to_train: [mover]\n");
  return file;
}

// The PettingZoo-style Python game: `loser` trains, `winner` is frozen; p0 wins every episode.
fs::path write_game(const rlx::test::TempDir& tmp) {
  const fs::path file = tmp / "game.yaml";
  rlx::test::write_text(file, std::string("game:\n  env: python:multi_agent_envs:TurnGame\n  python_path: [") + RLX_SOURCE_DIR +
                                  "/tests/envs/python]\n  algorithm: PPO\n  stop: {training_iteration: 3}\n" + kConfig +
                                  "  policies: {winner: {}, loser: {}}\n"
                                  "  policy_mapping: {p0: winner, p1: loser}\n"
                                  "  policies_to_train: [loser]\n");
  return file;
}

}  // namespace

TEST_CASE("A C++ plugin's multi-agent env trains from the CLI with two policies, one frozen", "[cli][multi_agent]") {
  rlx::test::TempDir tmp;
  check_trains(tmp, write_turns(tmp), "turns", "mover", "waiter");
  const std::string params = rlx::read_file(tmp / "runs" / "turns" / "t" / "params.yaml");
  CHECK_THAT(params, Catch::Contains("policies_to_train: [mover]") && Catch::Contains("hidden_sizes: [8]"));
}

TEST_CASE("A PettingZoo-style Python env trains from the CLI with two policies, one frozen", "[cli][multi_agent][python]") {
  rlx::test::TempDir tmp;
  check_trains(tmp, write_game(tmp), "game", "loser", "winner");
  // The game's fixed outcome: p0 wins every episode, p1 loses it.
  const nlohmann::json row = last_row(tmp / "runs" / "game" / "t");
  CHECK(row["agent"]["p0"]["episode_return_mean"] == 1.0);
  CHECK(row["agent"]["p1"]["episode_return_mean"] == -1.0);
  CHECK(row["episode_return_mean"] == 0.0);
}

// The "done when": both kinds of multi-agent env train with several policies, one frozen,
// in worker processes and with data-parallel learners.
TEST_CASE("Multi-agent envs from a C++ plugin and from Python train in worker processes with 2 learners",
          "[cli][multi_agent][python][dp]") {
  rlx::test::TempDir tmp;
  check_trains(tmp, write_turns(tmp), "turns", "mover", "waiter", "--workers 2 --learners 2");
  CHECK_THAT(rlx::read_file(tmp / "runs" / "turns" / "t" / "logs" / "learner_rank_1.log"), Catch::Contains("driver said stop"));
  CHECK(fs::exists(tmp / "runs" / "turns" / "t" / "logs" / "worker_2.log"));

  check_trains(tmp, write_game(tmp), "game", "loser", "winner", "--workers 2 --learners 2");
  // The workers' episode reports: p0 wins every episode, p1 loses it.
  const nlohmann::json row = last_row(tmp / "runs" / "game" / "t");
  CHECK(row["agent"]["p0"]["episode_return_mean"].get<double>() == Approx(1.0).margin(1e-9));
  CHECK(row["agent"]["p1"]["episode_return_mean"].get<double>() == Approx(-1.0).margin(1e-9));
  CHECK(row["num_env_steps_sampled"].get<int64_t>() > 0);
}


// Bad input mid-run: the env pays a reward to an agent it does not have. The run stops with exit
// status 2 and an error naming the env and the agent, in this process and in a worker; what was
// written before (result rows, checkpoints) stays whole.
TEST_CASE("A multi-agent env that breaks its contract mid-run fails it by name and loses nothing written",
          "[cli][multi_agent][python]") {
  for (const char* workers : {"0", "2"}) {
    INFO(workers << " workers");
    rlx::test::TempDir tmp;
    const fs::path file = tmp / "bad.yaml";
    rlx::test::write_text(file, std::string("bad:\n  env: python:multi_agent_envs:TurnGameGoesBad\n  python_path: [") +
                                    RLX_SOURCE_DIR + "/tests/envs/python]\n  algorithm: PPO\n"
                                    "  stop: {training_iteration: 100}\n" + kConfig);
    const auto r = run_rlx("train " + file.string() + " --workers " + workers + " --set checkpoint_freq=1 --output " +
                           (tmp / "runs").string() + " --trial-name t -q");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("python:multi_agent_envs:TurnGameGoesBad") && Catch::Contains("'ghost'"));
    const fs::path trial = tmp / "runs" / "bad" / "t";
    const nlohmann::json row = last_row(trial);  // every row parses: none is torn
    const int64_t iterations = row["training_iteration"].get<int64_t>();
    CHECK(iterations >= 1);
    CHECK_NOTHROW(rlx::read_checkpoint_dir(rlx::checkpoint_path(trial, iterations)));
  }
}
