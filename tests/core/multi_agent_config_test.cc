#include <catch2/catch.hpp>

#include "core/config_error.h"
#include "core/experiment.h"

using rlx::ConfigError;
using rlx::Experiment;
using rlx::parse_experiments;

namespace {

const char* kTwoPolicies = R"(two:
  env: MultiAgentCartPole-v0
  algorithm: PPO
  stop: {timesteps_total: 1000}
  config:
    lr: 0.001
    num_workers: 0
  policies:
    learner: {lr: 0.0003, hidden_sizes: [32, 32]}
    opponent: {}
  policy_mapping:
    agent_0: learner
    "agent_*": {random: [learner, opponent]}
  policies_to_train: [learner]
)";

Experiment parse(const std::string& text) { return parse_experiments(text, "ma.yaml", "/base").front(); }

std::string with(const std::string& field, const std::string& value) {
  return "x:\n  env: MultiAgentCartPole-v0\n  algorithm: PPO\n  stop: {timesteps_total: 1000}\n  " + field + ": " + value + "\n";
}

}  // namespace

TEST_CASE("policies, policy_mapping and policies_to_train are read, each policy with its own keys", "[core][multi_agent]") {
  const Experiment e = parse(kTwoPolicies);
  REQUIRE(e.multi_agent.policy_names() == std::vector<std::string>{"learner", "opponent"});
  CHECK(e.multi_agent.trains("learner"));
  CHECK_FALSE(e.multi_agent.trains("opponent"));
  REQUIRE(e.multi_agent.policy_mapping.size() == 2);
  CHECK(e.multi_agent.policy_mapping[0].agents == "agent_*");  // ordered by agents: '*' sorts before '0'
  CHECK(e.multi_agent.policy_mapping[0].policies == std::vector<std::string>{"learner", "opponent"});
  CHECK(e.multi_agent.policy_mapping[1].policies == std::vector<std::string>{"learner"});

  const rlx::Config learner = rlx::policy_config(e.config, e.multi_agent, "learner");
  CHECK(learner.ppo().lr == Approx(3e-4));
  CHECK(learner.common().hidden_sizes == rlx::IntList{32, 32});
  const rlx::Config opponent = rlx::policy_config(e.config, e.multi_agent, "opponent");
  CHECK(opponent.ppo().lr == Approx(1e-3));  // the experiment's
  CHECK(opponent.common().hidden_sizes == e.config.common().hidden_sizes);

  // params.yaml and checkpoints carry them: both forms read back equal.
  CHECK(parse(rlx::experiment_to_yaml(e)).multi_agent == e.multi_agent);
  CHECK(rlx::experiment_from_json(rlx::experiment_to_json(e), "checkpoint.json").multi_agent == e.multi_agent);

  // --set reaches one policy's key, and is checked like the file's.
  Experiment tuned = e;
  rlx::apply_override(tuned, "policies.opponent.lr=0.01");
  CHECK(rlx::policy_config(tuned.config, tuned.multi_agent, "opponent").ppo().lr == Approx(0.01));
  CHECK(rlx::policy_config(tuned.config, tuned.multi_agent, "learner").ppo().lr == Approx(3e-4));
  CHECK_THROWS_WITH(rlx::apply_override(tuned, "policies.ghost.lr=0.01"),
                    Catch::Contains("no policy 'ghost'") && Catch::Contains("learner, opponent"));
  CHECK_THROWS_WITH(rlx::apply_override(tuned, "policies.opponent.num_workers=3"),
                    Catch::Contains("num_workers applies to the whole run"));
  CHECK_THROWS_WITH(rlx::apply_override(tuned, "policies.opponent.lr=-1"), Catch::Contains("config key 'lr'"));
}

TEST_CASE("Without policies the agents share one policy, and a single-agent file is unchanged", "[core][multi_agent]") {
  const Experiment e = parse(with("config", "{lr: 0.001}"));
  CHECK(e.multi_agent.empty());
  CHECK(e.multi_agent.policy_names() == std::vector<std::string>{rlx::kDefaultPolicyName});
  CHECK(e.multi_agent.trains(rlx::kDefaultPolicyName));
  CHECK_FALSE(rlx::experiment_to_json(e).contains("policies"));
  CHECK(rlx::experiment_to_yaml(e).find("policies") == std::string::npos);
}

TEST_CASE("Bad multi-agent fields name the file, line, field and what was expected", "[core][multi_agent]") {
  CHECK_THROWS_WITH(parse(with("policies", "{a: {lr: 0.001}, b: {}}")),
                    Catch::Contains("ma.yaml:5") && Catch::Contains("2 policies need a 'policy_mapping'"));
  CHECK_THROWS_WITH(parse(with("policies", "{a: {learning_rat: 0.1}}")),
                    Catch::Contains("ma.yaml:5") && Catch::Contains("'policies.a.learning_rat': unknown config key"));
  CHECK_THROWS_WITH(parse(with("policies", "{a: {seed: 3}}")),
                    Catch::Contains("'policies.a.seed': seed applies to the whole run"));
  CHECK_THROWS_WITH(parse(with("policies", "{a: {lr: fast}}")), Catch::Contains("'policies.a.lr'") && Catch::Contains("expected"));
  CHECK_THROWS_WITH(parse(with("policies", "{a: {buffer_size: 10}}")), Catch::Contains("does not apply to PPO"));
  CHECK_THROWS_WITH(parse(with("policies", "{\"a b\": {}}")), Catch::Contains("a policy name is 1 to 64 letters"));
  CHECK_THROWS_WITH(parse(with("policies", "[a, b]")), Catch::Contains("expected a mapping of policy names"));
  CHECK_THROWS_WITH(parse(with("policy_mapping", "{agent_0: nobody}")),
                    Catch::Contains("'policy_mapping.agent_0': no policy 'nobody' (the policies: default_policy)"));
  CHECK_THROWS_WITH(parse(with("policy_mapping", "{agent_0: {random: []}}")),
                    Catch::Contains("expected a policy name, {random: [policy, ...]} or {shuffle: [policy, ...]}"));
  CHECK_THROWS_WITH(parse(with("policies_to_train", "[main]")), Catch::Contains("no policy 'main'"));
  CHECK_THROWS_WITH(parse(with("policies_to_train", "[]")), Catch::Contains("at least one policy must train"));
  CHECK_THROWS_WITH(parse(with("policys", "{}")), Catch::Contains("unknown field 'policys'") && Catch::Contains("did you mean 'policies'"));
}

TEST_CASE("A policy's keys pass the experiment's cross-key checks", "[core][multi_agent]") {
  Experiment e = parse(with("policies", "{a: {minibatch_size: 100000}}"));
  CHECK_THROWS_WITH(rlx::validate_experiment(e),
                    Catch::Contains("policy 'a'") && Catch::Contains("minibatch_size 100000 (ma.yaml:5)"));
}

TEST_CASE("Agent patterns: * any run, ? one character, the rest literal", "[core][multi_agent]") {
  CHECK(rlx::agent_pattern_matches("agent_*", "agent_0"));
  CHECK(rlx::agent_pattern_matches("agent_*", "agent_"));
  CHECK(rlx::agent_pattern_matches("*", "anything"));
  CHECK(rlx::agent_pattern_matches("p?_*_x", "p1_a_b_x"));
  CHECK_FALSE(rlx::agent_pattern_matches("agent_?", "agent_10"));
  CHECK_FALSE(rlx::agent_pattern_matches("agent_0", "agent_01"));
  CHECK_FALSE(rlx::agent_pattern_matches("*_x", "a_y"));
}

TEST_CASE("Scripted policies, shuffled sides and self-play are read and checked", "[core][multi_agent]") {
  const Experiment e = parse(R"(sp:
  env: ConnectFour-v0
  algorithm: PPO
  stop: {timesteps_total: 1000}
  policies: {main: {}, opponent: {}, random: {scripted: random}}
  policy_mapping: {"player_*": {shuffle: [main, opponent]}}
  policies_to_train: [main]
  self_play: {policy: main, opponent: opponent, snapshot_every: 5, pool_size: 3, sampling: pfsp, league: [random]}
)");
  CHECK(e.multi_agent.scripted("random") == "random");
  CHECK(e.multi_agent.scripted("main").empty());
  CHECK(e.multi_agent.policy_mapping[0].shuffle);
  CHECK(e.multi_agent.self_play.enabled());
  CHECK(e.multi_agent.self_play.league == std::vector<std::string>{"random"});
  CHECK(parse(rlx::experiment_to_yaml(e)).multi_agent == e.multi_agent);
  CHECK(rlx::experiment_from_json(rlx::experiment_to_json(e), "checkpoint.json").multi_agent == e.multi_agent);
  // Without policies_to_train, a scripted policy still does not train.
  const Experiment all = parse(with("policies", "{a: {}, r: {scripted: random}}\n  policy_mapping: {agent_0: a, \"*\": r}"));
  CHECK(all.multi_agent.trains("a"));
  CHECK_FALSE(all.multi_agent.trains("r"));

  CHECK_THROWS_WITH(parse(with("policies", "{a: {scripted: random, lr: 0.1}}")), Catch::Contains("a scripted policy is {scripted: RULE} alone"));
  CHECK_THROWS_WITH(parse(with("policies", "{r: {scripted: random}}")), Catch::Contains("every policy is scripted"));
  CHECK_THROWS_WITH(parse(with("policies", "{a: {}, r: {scripted: random}}\n  policy_mapping: {\"*\": a}\n  policies_to_train: [r]")),
                    Catch::Contains("policy 'r' is scripted and has nothing to learn"));
  const std::string two = "{a: {}, b: {}}\n  policy_mapping: {\"*\": {shuffle: [a, b]}}\n  policies_to_train: [a]\n  self_play: ";
  CHECK_THROWS_WITH(parse(with("policies", two + "{policy: b, opponent: a}")), Catch::Contains("'b' does not train"));
  CHECK_THROWS_WITH(parse(with("policies", two + "{policy: a, opponent: a}")), Catch::Contains("must be a frozen policy"));
  CHECK_THROWS_WITH(parse(with("policies", two + "{policy: a, opponent: b, sampling: elo}")), Catch::Contains("expected uniform or pfsp"));
  CHECK_THROWS_WITH(parse(with("policies", two + "{policy: a, opponent: b, pool: 3}")), Catch::Contains("'self_play.pool': unknown key"));
}

TEST_CASE("Tune reaches one policy's key as policies.NAME.KEY", "[core][multi_agent][tune]") {
  Experiment e = parse(kTwoPolicies);
  REQUIRE(rlx::find_tunable_key("policies.learner.lr") == rlx::find_key("lr"));
  CHECK(rlx::find_tunable_key("policies.learner.nonsense") == nullptr);
  rlx::set_tunable_key(e, "policies.opponent.lr", 0.02);
  CHECK(rlx::policy_config(e.config, e.multi_agent, "opponent").ppo().lr == Approx(0.02));
  rlx::set_tunable_key(e, "gamma", 0.9);
  CHECK(e.config.ppo().gamma == Approx(0.9));
  CHECK_THROWS_WITH(rlx::set_tunable_key(e, "policies.ghost.lr", 0.1), Catch::Contains("no policy 'ghost'"));
  CHECK_THROWS_WITH(rlx::set_tunable_key(e, "policies.opponent.seed", 1), Catch::Contains("applies to the whole run"));
  CHECK_THROWS_AS(rlx::set_tunable_key(e, "policies.opponent.lr", -1.0), ConfigError);
}
