#include <catch2/catch.hpp>

#include "core/experiment.h"
#include "tests/core/test_util.h"

using namespace rlx;
using rlx::test::error_of;
using rlx::test::TempDir;
using Catch::Contains;

namespace {

const char* const kTwoExperiments = R"(# two tuned examples
cartpole-ppo:
  env: CartPole-v1
  algorithm: PPO
  stop: {episode_return_mean: 475, timesteps_total: 300000}
  config:
    num_workers: 4
    lr: 1.0e-3
    hidden_sizes: [32, 32]
    normalize_advantages: false
    activation: relu
  plugins: [plugins/libmyenv.so, /abs/libother.so]
cartpole-dqn:
  env: CartPole-v1
  algorithm: DQN
  stop:
    timesteps_total: 1e5
    time_total_s: 600
  config:
    buffer_size: 50000
    double_q: no
    lr: 5e-4
  tune:
    lr: {loguniform: [1e-5, 1e-3]}
    seed: {grid_search: [1, 2, 3]}
    note: "123"
)";

// Loads a one-file experiment set from `text` written to DIR/exp.yaml.
std::vector<Experiment> load_text(const TempDir& dir, const std::string& text) {
  rlx::test::write_text(dir / "exp.yaml", text);
  return load_experiments(dir / "exp.yaml");
}

// The ConfigError message of loading `text`.
std::string load_error(const std::string& text) {
  TempDir dir;
  return error_of<ConfigError>([&] { load_text(dir, text); });
}

const char* const kHeader = "exp1:\n  env: CartPole-v1\n  algorithm: PPO\n  stop: {timesteps_total: 1000}\n";

}  // namespace

TEST_CASE("A file with two experiments parses with every field", "[core][config]") {
  TempDir dir;
  const auto experiments = load_text(dir, kTwoExperiments);
  REQUIRE(experiments.size() == 2);
  const Experiment& ppo = experiments[0];
  CHECK(ppo.name == "cartpole-ppo");
  CHECK(ppo.env == "CartPole-v1");
  CHECK(ppo.algorithm == AlgorithmKind::kPPO);
  CHECK(ppo.stop.episode_return_mean == 475.0);
  CHECK(ppo.stop.timesteps_total == 300000);
  CHECK_FALSE(ppo.stop.time_total_s);
  CHECK(ppo.config.common().num_workers == 4);
  CHECK(ppo.config.ppo().lr == 1e-3);
  CHECK(ppo.config.common().hidden_sizes == IntList{32, 32});
  CHECK(ppo.config.ppo().normalize_advantages == false);
  CHECK(ppo.config.common().activation == "relu");
  CHECK(ppo.config.ppo().gamma == 0.99);  // default
  REQUIRE(ppo.plugins.size() == 2);
  CHECK(ppo.plugins[0].path == (std::filesystem::absolute(dir.path()) / "plugins/libmyenv.so").lexically_normal().string());
  CHECK(ppo.plugins[1].path == "/abs/libother.so");
  CHECK(ppo.tune.is_null());
  CHECK(ppo.origins.at("lr") == (dir / "exp.yaml").string() + ":8");

  const Experiment& dqn = experiments[1];
  CHECK(dqn.algorithm == AlgorithmKind::kDQN);
  CHECK(dqn.stop.timesteps_total == 100000);
  CHECK(dqn.stop.time_total_s == 600.0);
  CHECK(dqn.config.dqn().buffer_size == 50000);
  CHECK(dqn.config.dqn().double_q == false);
  CHECK(dqn.tune["lr"]["loguniform"] == nlohmann::json::array({1e-5, 1e-3}));
  CHECK(dqn.tune["seed"]["grid_search"] == nlohmann::json::array({1, 2, 3}));
  CHECK(dqn.tune["note"] == "123");  // quoted stays a string
  CHECK_NOTHROW(validate_experiment(dqn));
}

TEST_CASE("Selecting an experiment needs a name when a file holds several", "[core][config]") {
  TempDir dir;
  const auto experiments = load_text(dir, kTwoExperiments);
  CHECK(select_experiment(experiments, "cartpole-dqn").name == "cartpole-dqn");
  const std::string several = error_of<ConfigError>([&] { select_experiment(experiments, ""); });
  CHECK_THAT(several, Contains("exp.yaml") && Contains("--experiment") && Contains("cartpole-ppo, cartpole-dqn"));
  const std::string missing = error_of<ConfigError>([&] { select_experiment(experiments, "cartpole-dq"); });
  CHECK_THAT(missing, Contains("no experiment 'cartpole-dq'") && Contains("did you mean 'cartpole-dqn'"));
  const std::vector<Experiment> one(experiments.begin(), experiments.begin() + 1);
  CHECK(select_experiment(one, "").name == "cartpole-ppo");
}

TEST_CASE("Config errors name the file, experiment, key, line, value and expectation", "[core][config]") {
  SECTION("unknown key with a suggestion") {
    const auto message = load_error(std::string(kHeader) + "  config:\n    num_worker: 3\n");
    CHECK_THAT(message, Contains("exp.yaml:6") && Contains("experiment 'exp1'") &&
                            Contains("unknown config key 'num_worker'") && Contains("did you mean 'num_workers'"));
  }
  SECTION("wrong type") {
    const auto message = load_error(std::string(kHeader) + "  config:\n    seed: 1\n    lr: fast\n");
    CHECK_THAT(message, Contains("exp.yaml:7") && Contains("config key 'lr'") && Contains("got 'fast'") &&
                            Contains("expected a float > 0"));
  }
  SECTION("wrong type in a list") {
    const auto message = load_error(std::string(kHeader) + "  config:\n    hidden_sizes: [64, big]\n");
    CHECK_THAT(message, Contains("exp.yaml:6") && Contains("'hidden_sizes'") && Contains("'big'") &&
                            Contains("a list of integers"));
  }
  SECTION("a mapping where a value goes hints at tune") {
    const auto message = load_error(std::string(kHeader) + "  config:\n    lr: {grid_search: [1, 2]}\n");
    CHECK_THAT(message, Contains("got a mapping") && Contains("tune:"));
  }
  SECTION("out of range") {
    const auto message = load_error(std::string(kHeader) + "  config:\n    gamma: 1.5\n");
    CHECK_THAT(message, Contains("exp.yaml:6") && Contains("'gamma'") && Contains("got '1.5'") &&
                            Contains("expected a float in [0, 1]"));
  }
  SECTION("a key of the other algorithm") {
    const auto message = load_error(std::string(kHeader) + "  config:\n    buffer_size: 1000\n");
    CHECK_THAT(message, Contains("exp.yaml:6") && Contains("'buffer_size' applies to DQN and SAC, not PPO"));
  }
  SECTION("missing env") {
    const auto message = load_error("exp1:\n  algorithm: PPO\n  stop: {timesteps_total: 10}\n");
    CHECK_THAT(message, Contains("exp.yaml:1") && Contains("experiment 'exp1'") && Contains("missing 'env'"));
  }
  SECTION("missing algorithm") {
    CHECK_THAT(load_error("exp1:\n  env: X\n  stop: {timesteps_total: 10}\n"), Contains("missing 'algorithm'"));
  }
  SECTION("missing stop") {
    CHECK_THAT(load_error("exp1:\n  env: X\n  algorithm: DQN\n"), Contains("missing 'stop'"));
  }
  SECTION("empty stop") {
    CHECK_THAT(load_error("exp1:\n  env: X\n  algorithm: DQN\n  stop: {}\n"),
               Contains("exp.yaml:4") && Contains("at least one criterion"));
  }
  SECTION("unknown stop criterion") {
    CHECK_THAT(load_error("exp1:\n  env: X\n  algorithm: DQN\n  stop: {timestep_total: 5}\n"),
               Contains("exp.yaml:4") && Contains("unknown stop criterion 'timestep_total'") &&
                   Contains("did you mean 'timesteps_total'"));
  }
  SECTION("bad stop value") {
    CHECK_THAT(load_error("exp1:\n  env: X\n  algorithm: DQN\n  stop:\n    timesteps_total: -5\n"),
               Contains("exp.yaml:5") && Contains("'timesteps_total'") && Contains("got '-5'") &&
                   Contains("an integer >= 1"));
  }
  SECTION("unknown algorithm") {
    CHECK_THAT(load_error("exp1:\n  env: X\n  algorithm: ppo\n  stop: {timesteps_total: 10}\n"),
               Contains("exp.yaml:3") && Contains("unknown algorithm 'ppo'") && Contains("did you mean 'PPO'"));
  }
  SECTION("unknown experiment field, a config key at the wrong level") {
    CHECK_THAT(load_error(std::string(kHeader) + "  lr: 0.1\n"),
               Contains("exp.yaml:5") && Contains("unknown field 'lr'") && Contains("put it under config:"));
  }
  SECTION("a stop criterion under config") {
    CHECK_THAT(load_error(std::string(kHeader) + "  config: {timesteps_total: 5}\n"),
               Contains("is a stop criterion"));
  }
  SECTION("duplicate key") {
    CHECK_THAT(load_error(std::string(kHeader) + "  config:\n    lr: 0.1\n    lr: 0.2\n"),
               Contains("exp.yaml:7") && Contains("duplicate key 'lr' (first at line 6)"));
  }
  SECTION("bad YAML syntax") {
    const auto message = load_error("exp1:\n  env: [CartPole\n  algorithm: PPO\n");
    CHECK_THAT(message, Contains("exp.yaml:") && Contains("YAML syntax error"));
  }
  SECTION("empty file") { CHECK_THAT(load_error(""), Contains("no experiments")); }
  SECTION("a file that cannot be read, with the reason") {
    CHECK(error_of<ConfigError>([] { load_experiments("/nonexistent/x.yaml"); }) ==
          "/nonexistent/x.yaml: cannot read the experiment file: no such file");
    TempDir dir;
    CHECK(error_of<ConfigError>([&] { load_experiments(dir.path()); }) ==
          dir.path().string() + ": cannot read the experiment file: it is a directory");
  }
}

TEST_CASE("A key's first word or a whole word of it suggests the key, in the file and in --set", "[core][config]") {
  CHECK_THAT(load_error(std::string(kHeader) + "  config:\n    entropy: 0.1\n"),
             Contains("exp.yaml:6") && Contains("unknown config key 'entropy' (did you mean 'entropy_coeff'?)"));
  TempDir dir;
  Experiment experiment = load_text(dir, kHeader)[0];
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(experiment, "clip=0.3"); }),
             Contains("unknown key 'clip' (did you mean 'clip_param'?)"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(experiment, "stop.timesteps=5"); }),
             Contains("did you mean 'stop.timesteps_total'?"));
}

TEST_CASE("A list key given one integer is refused in the file, in --set and in JSON, with the list to write",
          "[core][config]") {
  // hidden_sizes: 64 once meant one layer of 64, silently; [64] says so.
  const auto message = load_error(std::string(kHeader) + "  config:\n    hidden_sizes: 64\n");
  CHECK_THAT(message, Contains("exp.yaml:6: experiment 'exp1': config key 'hidden_sizes': got '64', expected a list of "
                               "integers, each >= 1: [64] for a list of one, [64, 64] for a list of two"));
  TempDir dir;
  Experiment experiment = load_text(dir, std::string(kHeader) + "  config:\n    hidden_sizes: [64]\n")[0];
  CHECK(experiment.config.common().hidden_sizes == IntList{64});

  CHECK_THAT(error_of<ConfigError>([&] { apply_override(experiment, "hidden_sizes=32"); }),
             Contains("--set hidden_sizes=32") && Contains("config key 'hidden_sizes': got '32'") &&
                 Contains("hidden_sizes=[32] for a list of one, hidden_sizes=32,32 for a list of two"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(experiment, "hidden_sizes="); }), Contains("got ''"));
  CHECK(experiment.config.common().hidden_sizes == IntList{64});
  apply_override(experiment, "hidden_sizes=[32]");
  CHECK(experiment.config.common().hidden_sizes == IntList{32});

  CHECK_THAT(error_of<ConfigError>([&] { experiment.config.set_json("hidden_sizes", 16); }),
             Contains("config key 'hidden_sizes': got 16") && Contains("[16] for a list of one"));
}

TEST_CASE("Overrides (--set) reach every type, stop criteria and env", "[core][config]") {
  TempDir dir;
  Experiment ppo = load_text(dir, kTwoExperiments)[0];
  apply_overrides(ppo, {"lr=1e-3", "hidden_sizes=[256,256]", "normalize_advantages=true", "seed=7",
                        "config.activation=relu", "stop.timesteps_total=2e6", "env=Acrobot-v1",
                        "stop.episode_return_mean=null"});
  CHECK(ppo.config.ppo().lr == 1e-3);
  CHECK(ppo.config.common().hidden_sizes == IntList{256, 256});
  CHECK(ppo.config.ppo().normalize_advantages == true);
  CHECK(ppo.config.common().seed == 7);
  CHECK(ppo.config.common().activation == "relu");
  CHECK(ppo.stop.timesteps_total == 2000000);
  CHECK_FALSE(ppo.stop.episode_return_mean);
  CHECK(ppo.env == "Acrobot-v1");
  CHECK(ppo.origins.at("lr") == "--set");
  apply_override(ppo, "hidden_sizes=128,64");
  CHECK(ppo.config.common().hidden_sizes == IntList{128, 64});

  Experiment dqn = load_text(dir, kTwoExperiments)[1];
  apply_override(dqn, "double_q=false");
  CHECK(dqn.config.dqn().double_q == false);

  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "lr=abc"); }),
             Contains("--set lr=abc") && Contains("exp.yaml") && Contains("'lr'") && Contains("expected a float"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "buffer_size=10"); }), Contains("applies to DQN"));
  // Head layers are the actor-critic's (PPO, APPO): DQN and SAC refuse the key by name.
  Experiment headed = ppo;
  CHECK(headed.config.ppo().head_fcnet_hiddens.empty());
  apply_override(headed, "head_fcnet_hiddens=[64]");
  CHECK(headed.config.ppo().head_fcnet_hiddens == IntList{64});
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(dqn, "head_fcnet_hiddens=[64]"); }),
             Contains("config key 'head_fcnet_hiddens' applies to PPO and APPO, not DQN"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(headed, "head_fcnet_hiddens=[0]"); }),
             Contains("'head_fcnet_hiddens'"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "num_worker=1"); }),
             Contains("unknown key 'num_worker'") && Contains("did you mean 'num_workers'"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "gamma=2"); }), Contains("in [0, 1]"));
  // Suggestions: the experiment's own algorithm's keys first, then other libraries' names, and a
  // key of another algorithm only with a word saying so.
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "learning_rate=1e-3"); }),
             Contains("did you mean 'lr', rlx's name for learning_rate?"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "ent_coef=0.01"); }), Contains("did you mean 'entropy_coeff'"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "learning_start=10"); }),
             Contains("did you mean 'learning_starts'? it is a DQN and SAC key; this experiment runs PPO"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "plugins=/x/libenv.so"); }), Contains("--env-plugin PATH"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "lr"); }), Contains("expected key=value"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "stop.timesteps_total=null"); }),
             Contains("at least one criterion"));
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "stop.iterations=5"); }),
             Contains("unknown stop criterion"));
  // Switching the algorithm is refused while the file sets keys of the old one.
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "algorithm=DQN"); }),
             Contains("'normalize_advantages'") && Contains("applies to PPO and APPO, not DQN"));
}

TEST_CASE("Cross-key validation names where values came from", "[core][config]") {
  TempDir dir;
  const std::string schedule = std::string("exp1:\n  env: X\n  algorithm: PPO\n  stop: {episode_return_mean: 1}\n") +
                               "  config:\n    lr_schedule: linear\n";
  Experiment experiment = load_text(dir, schedule)[0];
  CHECK_THAT(error_of<ConfigError>([&] { validate_experiment(experiment); }),
             Contains("lr_schedule (" + (dir / "exp.yaml").string() + ":6)") && Contains("stop.timesteps_total"));
  apply_override(experiment, "stop.timesteps_total=100000");
  CHECK_NOTHROW(validate_experiment(experiment));
  apply_override(experiment, "minibatch_size=5000");
  CHECK_THAT(error_of<ConfigError>([&] { validate_experiment(experiment); }),
             Contains("minibatch_size 5000 (--set)") && Contains("1024"));

  rlx::test::write_text(dir / "dqn.yaml", "d:\n  env: X\n  algorithm: DQN\n  stop: {training_iteration: 3}\n");
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "dqn.yaml", "", {}); }),
             Contains("exploration_fraction") && Contains("stop.timesteps_total"));
  CHECK_NOTHROW(load_experiment(dir / "dqn.yaml", "d", {"exploration_fraction=0"}));
  CHECK_THAT(error_of<ConfigError>([&] {
               load_experiment(dir / "dqn.yaml", "d", {"exploration_fraction=0", "batch_size=64", "buffer_size=32"});
             }),
             Contains("batch_size 64") && Contains("buffer_size 32 (--set)"));
  // Training could never start: the buffer never holds learning_starts transitions.
  CHECK_THAT(error_of<ConfigError>([&] {
               load_experiment(dir / "dqn.yaml", "d", {"exploration_fraction=0", "batch_size=16", "buffer_size=500"});
             }),
             Contains("learning_starts 1000 (default)") && Contains("larger than buffer_size 500 (--set)"));
}

TEST_CASE("Experiments round-trip through YAML and JSON", "[core][config]") {
  TempDir dir;
  for (const Experiment& original : load_text(dir, kTwoExperiments)) {
    Experiment experiment = original;
    apply_override(experiment, "lr=0.000123");
    const std::string yaml = experiment_to_yaml(experiment);
    INFO(yaml);
    // Every key of the algorithm appears, with its value.
    for (const auto& key : config_schema()) {
      CHECK((yaml.find("    " + key.name + ":") != std::string::npos) == key.applies_to(experiment.algorithm));
    }
    rlx::test::write_text(dir / "params.yaml", yaml);
    const auto reread = load_experiments(dir / "params.yaml");
    REQUIRE(reread.size() == 1);
    CHECK(experiment_to_json(reread[0]) == experiment_to_json(experiment));
    CHECK(reread[0].config == experiment.config);

    const nlohmann::json json = experiment_to_json(experiment);
    CHECK(json["config"]["lr"] == 0.000123);
    const Experiment back = experiment_from_json(nlohmann::json::parse(json.dump()), "checkpoint.json");
    CHECK(experiment_to_json(back) == json);
    CHECK(back.config == experiment.config);
  }
}

TEST_CASE("Experiment JSON from an older rlx fills defaults, and bad JSON is refused", "[core][config]") {
  nlohmann::json json = {{"name", "e"}, {"env", "CartPole-v1"}, {"algorithm", "PPO"},
                         {"stop", {{"training_iteration", 5}}}, {"config", {{"lr", 0.01}}}};
  const Experiment experiment = experiment_from_json(json, "ckpt/checkpoint.json");
  CHECK(experiment.config.ppo().lr == 0.01);
  CHECK(experiment.config.ppo().num_epochs == 10);
  CHECK(experiment.stop.training_iteration == 5);

  json["config"]["lr"] = "fast";
  CHECK_THAT(error_of<ConfigError>([&] { experiment_from_json(json, "ckpt/checkpoint.json"); }),
             Contains("ckpt/checkpoint.json") && Contains("'lr'") && Contains("expected a float"));
  json["config"] = {{"future_key", 1}};
  CHECK_THAT(error_of<ConfigError>([&] { experiment_from_json(json, "c.json"); }), Contains("unknown config key 'future_key'"));
  json["config"] = {{"tau", 0.5}};
  CHECK_THAT(error_of<ConfigError>([&] { experiment_from_json(json, "c.json"); }), Contains("applies to DQN"));
  // DQN checkpoints of earlier versions hold normalize_observations, which DQN never read.
  json["algorithm"] = "DQN";
  json["config"] = {{"tau", 0.5}, {"normalize_observations", false}};
  CHECK(experiment_from_json(json, "c.json").config.dqn().tau == 0.5);
  json["config"] = {{"clip_param", 0.1}};
  CHECK_THAT(error_of<ConfigError>([&] { experiment_from_json(json, "c.json"); }), Contains("applies to PPO"));
  json.erase("stop");
  CHECK_THAT(error_of<ConfigError>([&] { experiment_from_json(json, "c.json"); }), Contains("'stop'"));
}

TEST_CASE("APPO experiments read PPO's keys and their own, with APPO's max_policy_lag default", "[core][config][appo]") {
  TempDir dir;
  rlx::test::write_text(dir / "appo.yaml",
                        "a:\n  env: CartPole-v1\n  algorithm: APPO\n  stop: {timesteps_total: 1000}\n"
                        "  config:\n    lr: 0.002\n    rho_bar: 2.0\n    vtrace: false\n    learner_queue_size: 3\n");
  Experiment appo = load_experiment(dir / "appo.yaml", "", {});
  CHECK(appo.algorithm == AlgorithmKind::kAPPO);
  CHECK(appo.config.ppo().lr == 0.002);
  CHECK(appo.config.appo().rho_bar == 2.0);
  CHECK(appo.config.appo().c_bar == 1.0);
  CHECK_FALSE(appo.config.appo().vtrace);
  CHECK(appo.config.appo().learner_queue_size == 3);
  CHECK(appo.config.common().max_policy_lag == 32);  // APPO's default; PPO's is 1
  // It survives the round trip through a checkpoint's JSON, and an explicit value wins.
  CHECK(experiment_from_json(experiment_to_json(appo), "x").config == appo.config);
  CHECK(load_experiment(dir / "appo.yaml", "", {"max_policy_lag=5"}).config.common().max_policy_lag == 5);

  Experiment ppo = load_text(dir, kTwoExperiments)[0];
  CHECK(ppo.config.common().max_policy_lag == 1);
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "rho_bar=2"); }), Contains("applies to APPO, not PPO"));
  // Switching PPO to APPO takes APPO's default lag unless the lag was set.
  apply_override(ppo, "algorithm=APPO");
  CHECK(ppo.config.common().max_policy_lag == 32);
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "appo.yaml", "", {"algorithm=APPX"}); }),
             Contains("unknown algorithm 'APPX'") && Contains("\"APPO\""));
  // A weight delay the lag bound would drop entirely is refused, naming both.
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "appo.yaml", "", {"worker_weight_delay=32"}); }),
             Contains("worker_weight_delay 32 (--set)") && Contains("max_policy_lag 32 (default)"));
  CHECK_NOTHROW(load_experiment(dir / "appo.yaml", "", {"worker_weight_delay=31"}));
  // A recurrent core: one kind, PPO or APPO, any number of learners.
  CHECK(load_experiment(dir / "appo.yaml", "", {"use_gru=true"}).config.common().recurrent());
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "appo.yaml", "", {"use_lstm=true", "use_gru=true"}); }),
             Contains("use_lstm (--set) and use_gru (--set) are both true"));
  rlx::test::write_text(dir / "dqn.yaml", "d:\n  env: CartPole-v1\n  algorithm: DQN\n  stop: {timesteps_total: 1000}\n");
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "dqn.yaml", "", {"use_lstm=true"}); }),
             Contains("use_lstm (--set): a recurrent core trains with PPO or APPO; DQN has none yet"));
  // Data-parallel learners shard a recurrent core's batch by sequence (learner/sequence_shards.h).
  const Experiment sharded = load_experiment(dir / "appo.yaml", "", {"use_lstm=true", "num_learners=2"});
  CHECK(sharded.config.common().recurrent());
  CHECK(sharded.config.common().num_learners == 2);
}

TEST_CASE("SAC experiments read their own keys, DQN's replay keys and the common ones, with SAC's defaults",
          "[core][config][sac]") {
  TempDir dir;
  rlx::test::write_text(dir / "sac.yaml",
                        "s:\n  env: Pendulum-v1\n  algorithm: SAC\n  stop: {timesteps_total: 1000}\n"
                        "  config:\n    lr: 0.002\n    critic_lr: 0.0005\n    utd_ratio: 2\n    buffer_size: 5000\n");
  Experiment sac = load_experiment(dir / "sac.yaml", "", {});
  CHECK(sac.algorithm == AlgorithmKind::kSAC);
  const SacConfig& config = sac.config.sac();
  CHECK(config.lr == 0.002);
  CHECK(config.critic_lr_at(0) == 0.0005);
  CHECK(config.actor_lr_at(0) == 0.002);  // 0: takes lr
  CHECK(config.alpha_lr_at(0) == 0.002);
  CHECK(config.utd_ratio == 2.0);
  CHECK(config.buffer_size == 5000);
  // SAC's defaults (SB3's), where the key's default is another algorithm's.
  CHECK(config.batch_size == 256);
  CHECK(config.tau == 0.005);
  CHECK(config.learning_starts == 100);
  CHECK(config.adam_eps == 1e-8);
  CHECK(config.grad_clip == 0.0);
  CHECK(config.autotune_alpha);
  CHECK(sac.config.common().hidden_sizes == IntList{256, 256});
  CHECK(sac.config.common().activation == "relu");
  CHECK(sac.config.common().learner_backend == "native");
  CHECK(sac.config.common().rollout_fragment_length == 1);
  CHECK(SacConfig().batch_size == 256);  // a section built in code holds SAC's defaults too
  CHECK(experiment_from_json(experiment_to_json(sac), "x").config == sac.config);

  // Keys of other algorithms are refused, naming who reads them; bad values name key and value.
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "sac.yaml", "", {"clip_param=0.1"}); }),
             Contains("applies to PPO and APPO, not SAC"));
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "sac.yaml", "", {"double_q=false"}); }),
             Contains("applies to DQN, not SAC"));
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "sac.yaml", "", {"utd_ratio=0"}); }),
             Contains("utd_ratio") && Contains("got 0"));
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "sac.yaml", "", {"batch_size=6000"}); }),
             Contains("batch_size 6000") && Contains("buffer_size 5000"));
  CHECK(find_key("tau")->applies_to(AlgorithmKind::kSAC));
  CHECK_FALSE(find_key("tau")->applies_to(AlgorithmKind::kPPO));
  CHECK(find_key("gamma")->scope() == KeyScope::kCommon);
  CHECK(find_key("initial_alpha")->scope() == KeyScope::kSAC);
  // A PPO experiment does not take SAC's keys.
  Experiment ppo = load_text(dir, kTwoExperiments)[0];
  CHECK_THAT(error_of<ConfigError>([&] { apply_override(ppo, "initial_alpha=0.5"); }), Contains("applies to SAC, not PPO"));
  CHECK_THAT(error_of<ConfigError>([&] { load_experiment(dir / "sac.yaml", "", {"algorithm=SACC"}); }),
             Contains("\"SAC\""));
}

TEST_CASE("A Python env's env_config and python_path parse, override, round-trip and refuse bad types",
          "[core][config][python]") {
  const char* const text = R"(py:
  env: python:my_envs.cartpole:CartPoleEnv
  env_config: {gravity: 9.0, name: pole, sizes: [1, 2], nested: {on: true}}
  python_path: [envs, /abs/site]
  algorithm: PPO
  stop: {timesteps_total: 1000}
)";
  Experiment e = parse_experiments(text, "py.yaml", "/base").front();
  CHECK(e.env == "python:my_envs.cartpole:CartPoleEnv");
  CHECK(e.env_config == nlohmann::json::parse(R"({"gravity": 9.0, "name": "pole", "sizes": [1, 2], "nested": {"on": true}})"));
  CHECK(e.python_path == std::vector<std::string>{"/base/envs", "/abs/site"});
  CHECK(parse_experiments("py:\n  env: python:m:C\n  python_path: .\n  algorithm: PPO\n  stop: {timesteps_total: 1}\n",
                          "py.yaml", "/base")
            .front()
            .python_path == std::vector<std::string>{"/base"});

  apply_override(e, "env_config.gravity=3.5");
  apply_override(e, "env_config.new_key=abc");
  CHECK(e.env_config.at("gravity") == 3.5);
  CHECK(e.env_config.at("new_key") == "abc");
  CHECK(e.origins.at("env_config") == "--set");

  const Experiment from_yaml = parse_experiments(experiment_to_yaml(e), "params.yaml", "/elsewhere").front();
  CHECK(from_yaml.env_config == e.env_config);
  CHECK(from_yaml.python_path == e.python_path);  // absolute already: not re-resolved
  const Experiment from_json = experiment_from_json(experiment_to_json(e), "checkpoint.json");
  CHECK(from_json.env_config == e.env_config);
  CHECK(from_json.python_path == e.python_path);
  // A C++ env's experiment writes neither field.
  const std::string plain = experiment_to_yaml(parse_experiments(kTwoExperiments, "two.yaml", "/base").front());
  CHECK_THAT(plain, !Contains("env_config") && !Contains("python_path"));

  CHECK_THAT(error_of<ConfigError>([] {
               parse_experiments("py:\n  env: python:m:C\n  env_config: [1, 2]\n  algorithm: PPO\n  stop: {timesteps_total: 1}\n",
                                 "bad.yaml", "/base");
             }),
             Contains("bad.yaml:3: experiment 'py': 'env_config': got a list, expected a mapping of the env's keyword arguments"));
  CHECK_THAT(error_of<ConfigError>([] {
               parse_experiments("py:\n  env: python:m:C\n  python_path: {a: 1}\n  algorithm: PPO\n  stop: {timesteps_total: 1}\n",
                                 "bad.yaml", "/base");
             }),
             Contains("bad.yaml:3: experiment 'py': 'python_path': got a mapping, expected a directory or a list of directories"));
  CHECK_THAT(error_of<ConfigError>([&e] { apply_override(e, "env_config.=1"); }), Contains("expected env_config.NAME=VALUE"));
}
