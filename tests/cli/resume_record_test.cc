// One record across attempts, as a requeued Slurm job makes them: a run resumed with --resume
// auto writes its paths (the "results:" line, result.json's last_checkpoint) as the fresh run
// did, relative to the directory --output is relative to; and a finished trial submitted again
// says that it has nothing to train, even with -q, and exits as it did. Counters add up over the
// attempts: result.json's attempt, and its sampler counts are the earlier attempts' (as the
// checkpoint it continued from kept them) plus this one's (sampler_this_attempt).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::read_text_file;

struct Attempt {
  int exit_code = -1;
  std::string out, err;
};

// `rlx train cartpole-ppo.yaml --output runs --trial-name t --resume auto -q` run in `dir` (so
// --output is relative) with a budget of `steps`.
Attempt attempt(const fs::path& dir, int steps) {
  const std::string command = "cd " + dir.string() + " && " + RLX_BINARY_DIR + "/rlx train " + RLX_SOURCE_DIR +
                              "/experiments/cartpole-ppo.yaml --output runs --trial-name t --resume auto -q --set "
                              "stop.episode_return_mean=null --set stop.timesteps_total=" +
                              std::to_string(steps) + " >attempt.out 2>attempt.err";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text_file((dir / "attempt.out").string()),
          read_text_file((dir / "attempt.err").string())};
}

nlohmann::json result_of(const fs::path& dir) {
  return nlohmann::json::parse(read_text_file((dir / "runs/cartpole-ppo/t/result.json").string()));
}

std::string last_checkpoint(const fs::path& dir) { return result_of(dir).at("last_checkpoint").get<std::string>(); }

}  // namespace

TEST_CASE("A resumed run writes its paths as the fresh run did and a finished trial submitted again says so",
          "[cli][resume]") {
  rlx::test::TempDir tmp;
  const Attempt first = attempt(tmp.path(), 2048);
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 3);
  CHECK_THAT(first.out, Catch::Contains("results: runs/cartpole-ppo/t\n"));
  CHECK(last_checkpoint(tmp.path()) == "runs/cartpole-ppo/t/checkpoints/checkpoint_000002");
  const nlohmann::json first_result = result_of(tmp.path());
  CHECK(first_result.at("attempt") == 1);
  CHECK(first_result.at("sampler").at("workers_joined") == 2);  // the experiment's 2 local workers
  CHECK(first_result.at("sampler_this_attempt").at("workers_joined") == 2);

  const Attempt second = attempt(tmp.path(), 4096);
  INFO(second.out << second.err);
  REQUIRE(second.exit_code == 3);
  CHECK_THAT(second.err, Catch::Contains("continuing from runs/cartpole-ppo/t/checkpoints/checkpoint_000002"));
  CHECK_THAT(second.out, Catch::Contains("results: runs/cartpole-ppo/t\n") &&
                             Catch::Contains("checkpoint: runs/cartpole-ppo/t/checkpoints/checkpoint_000004\n"));
  CHECK(last_checkpoint(tmp.path()) == "runs/cartpole-ppo/t/checkpoints/checkpoint_000004");
  const nlohmann::json second_result = result_of(tmp.path());
  const nlohmann::json kept = nlohmann::json::parse(read_text_file(
      (tmp / "runs/cartpole-ppo/t/checkpoints/checkpoint_000002/checkpoint.json").string()))["counters"];
  INFO(second_result.dump() << "\n" << kept.dump());
  CHECK(second_result.at("attempt") == 2);
  CHECK(second_result.at("training_iteration") == 4);
  CHECK(second_result.at("sampler_this_attempt").at("workers_joined") == 2);
  CHECK(second_result.at("sampler").at("workers_joined") == 4);
  for (const char* count : {"fragments_received", "fragments_consumed", "fragments_dropped_stale"}) {
    INFO(count);
    CHECK(second_result.at("sampler").at(count) ==
          kept.at("sampler").at(count).get<uint64_t>() + second_result.at("sampler_this_attempt").at(count).get<uint64_t>());
  }
  // Over both attempts every fragment received is accounted for: what the first attempt had
  // queued at its checkpoint the second never takes (fragments_dropped_at_stop).
  const nlohmann::json& totals = second_result.at("sampler");
  const auto count = [&](const char* name) { return totals.at(name).get<uint64_t>(); };
  CHECK(count("fragments_dropped_at_stop") == kept.at("sampler").at("fragments_dropped_at_stop").get<uint64_t>());
  CHECK(count("fragments_received") == count("fragments_consumed") + count("fragments_queued") +
                                           count("fragments_dropped_stale") + count("fragments_dropped_other") +
                                           count("fragments_refused") + count("fragments_dropped_at_stop"));

  const Attempt again = attempt(tmp.path(), 4096);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 3);
  CHECK_THAT(again.err, Catch::Contains("runs/cartpole-ppo/t/checkpoints/checkpoint_000004 already meets "
                                        "timesteps_total; nothing to train"));
  CHECK(last_checkpoint(tmp.path()) == "runs/cartpole-ppo/t/checkpoints/checkpoint_000004");
}
