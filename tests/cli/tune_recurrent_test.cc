// `rlx tune` with a recurrent policy: PBT's trials train an LSTM, stop at each perturbation,
// and resume (their own checkpoint or a donor's) with the core and its states intact.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;

// 4 PPO trials with an LSTM of 8 on CartPoleNoVel-v1, 4 iterations of 128 steps, PBT every 256.
const char* kRecurrentTuneYaml = R"(recurrent-tune:
  env: CartPoleNoVel-v1
  algorithm: PPO
  stop: {timesteps_total: 512}
  config:
    use_lstm: true
    lstm_cell_size: 8
    max_seq_len: 16
    hidden_sizes: []
    num_workers: 0
    num_envs_per_worker: 2
    rollout_fragment_length: 64
    minibatch_size: 64
    num_epochs: 1
    checkpoint_freq: 0
  tune:
    num_samples: 4
    max_concurrent_trials: 2
    scheduler:
      type: pbt
      time_attr: timesteps_total
      perturbation_interval: 256
      quantile_fraction: 0.25
      synch: true
      hyperparam_mutations:
        lr: [1.0e-3, 2.0e-3, 4.0e-3]
)";

}  // namespace

TEST_CASE("rlx tune runs PBT on a recurrent policy: every segment resumes an LSTM checkpoint", "[cli][tune][recurrent]") {
  rlx::test::TempDir tmp;
  rlx::test::write_text(tmp / "tune.yaml", kRecurrentTuneYaml);
  const auto run = rlx::test::run_rlx("tune " + (tmp / "tune.yaml").string() + " --output " + (tmp / "runs").string() + " --quiet");
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  const fs::path dir = tmp / "runs/recurrent-tune";
  const nlohmann::json state = nlohmann::json::parse(rlx::test::read_text_file((dir / "experiment_state.json").string()));
  REQUIRE(state.at("trials").size() == 4);
  for (const auto& trial : state.at("trials")) {
    INFO(trial.dump());
    CHECK(trial.at("status") == "TERMINATED");
    CHECK(trial.at("timesteps_total") == 512);
    CHECK(trial.at("segments") == 2);  // the second resumed from a checkpoint: its own or a donor's
  }
  // Every checkpoint holds the recurrent model, and a synchronous one its envs' LSTM states.
  int checkpoints = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename() != "checkpoint.json") continue;
    const nlohmann::json manifest = nlohmann::json::parse(rlx::test::read_text_file(entry.path().string()));
    INFO(entry.path());
    CHECK(manifest.at("model").at("core") == nlohmann::json({{"kind", "lstm"}, {"size", 8}, {"layers", 1}}));
    ++checkpoints;
  }
  CHECK(checkpoints >= 8);
}
