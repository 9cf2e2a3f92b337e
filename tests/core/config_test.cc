#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "core/config.h"
#include "tests/core/test_util.h"

using namespace rlx;
using rlx::test::error_of;

TEST_CASE("Schema entries are unique, documented and their defaults valid", "[core][config]") {
  std::set<std::string> names;
  for (const auto& key : config_schema()) {
    INFO(key.name);
    CHECK(names.insert(key.name).second);
    CHECK_FALSE(key.description.empty());
    CHECK(key.default_value.index() == static_cast<size_t>(key.type));  // variant order follows ConfigType
    CHECK_FALSE(key.problem_with(key.default_value).has_value());
    CHECK(find_key(key.name) == &key);
  }
  CHECK(names.size() >= 48);
  CHECK(find_key("no_such_key") == nullptr);
}

TEST_CASE("Config starts at the defaults and typed getters return them", "[core][config]") {
  const Config config;
  CHECK(config.common().seed == 0);
  CHECK(config.common().num_workers == 2);
  CHECK(config.common().num_envs_per_worker == 8);
  CHECK(config.common().rollout_fragment_length == 64);
  CHECK(config.common().checkpoint_freq == 10);
  CHECK(config.ppo().gamma == 0.99);
  CHECK(config.ppo().lr == 3e-4);
  CHECK(config.ppo().lr_schedule == rlx::Schedule::kConstant);
  CHECK(config.common().device == "cpu");
  CHECK(config.common().hidden_sizes == IntList{64, 64});
  CHECK(config.common().vf_share_layers == false);
  CHECK(config.ppo().grad_clip == 0.5);
  CHECK(config.ppo().train_batch_size == 0);
  CHECK(config.ppo().lambda == 0.95);
  CHECK(config.ppo().normalize_advantages == true);
  CHECK(config.dqn().buffer_size == 100000);
  CHECK(config.dqn().tau == 1.0);
  CHECK(config.dqn().double_q == true);
  CHECK(config.dqn().prioritized_replay_beta == 0.4);
  CHECK(config.dqn().exploration_final_eps == 0.05);
  CHECK(config.dqn().huber_delta == 1.0);
  CHECK(std::get<double>(config.get("clip_param")) == 0.2);
}

TEST_CASE("Config::get and set throw logic_error on keys not in the schema", "[core][config]") {
  Config config;
  CHECK_THROWS_AS(config.get("no_such_key"), std::logic_error);
  CHECK_THROWS_AS(config.set("no_such_key", int64_t{1}), std::logic_error);
}

TEST_CASE("Every key is bound to a member, and a shared key writes each algorithm's member", "[core][config]") {
  for (const auto& key : config_schema()) {
    INFO(key.name);
    CHECK(!key.bindings.empty());
  }
  Config config;
  config.set("lr", 2e-3);
  CHECK(config.ppo().lr == 2e-3);
  CHECK(config.dqn().lr == 2e-3);
  config.set("lr_schedule", std::string("linear"));
  CHECK(config.ppo().lr_schedule == rlx::Schedule::kLinear);
  CHECK(config.dqn().lr_schedule == rlx::Schedule::kLinear);
  CHECK(std::get<std::string>(config.get("lr_schedule")) == "linear");
  config.set("buffer_size", int64_t{5000});
  CHECK(config.dqn().buffer_size == 5000);
  config.set("lambda", 0.9);
  CHECK(config.ppo().lambda == 0.9);
  CHECK(config != Config());
}

TEST_CASE("The typed structs start at the schema's defaults, and check_config applies its ranges", "[core][config]") {
  const Config defaults;
  for (const auto& key : config_schema()) {
    INFO(key.name);
    CHECK(defaults.get(key.name) == key.default_value);
  }
  rlx::PpoConfig ppo;
  CHECK(ppo.lr == 3e-4);
  CHECK(ppo.clip_schedule == rlx::Schedule::kConstant);
  CHECK(ppo.num_epochs == 10);
  rlx::DqnConfig dqn;
  CHECK(dqn.target_update_interval == 1000);
  CHECK(dqn.checkpoint_replay_buffer == true);
  CHECK(rlx::CommonConfig().hidden_sizes == IntList{64, 64});

  check_config(ppo);  // the defaults are in range
  ppo.gamma = 1.5;
  CHECK_THAT(error_of<ConfigError>([&] { check_config(ppo); }),
             Catch::Contains("config key 'gamma'") && Catch::Contains("1.5") && Catch::Contains("in [0, 1]"));
  dqn.tau = 0.0;
  CHECK_THAT(error_of<ConfigError>([&] { check_config(dqn); }), Catch::Contains("config key 'tau'"));
  dqn.tau = 1.0;
  dqn.lr = std::nan("");
  CHECK_THAT(error_of<ConfigError>([&] { check_config(dqn); }), Catch::Contains("config key 'lr'") && Catch::Contains("not finite"));
}

TEST_CASE("Config::set checks types and ranges with ConfigError", "[core][config]") {
  Config config;
  config.set("lr", int64_t{1});  // ints widen to floats
  CHECK(config.ppo().lr == 1.0);
  config.set("hidden_sizes", IntList{256, 256, 128});
  CHECK(config.common().hidden_sizes == IntList{256, 256, 128});
  CHECK_THAT(error_of<ConfigError>([&] { config.set("lr", -1.0); }),
             Catch::Contains("config key 'lr'") && Catch::Contains("-1.0") && Catch::Contains("expected a float > 0"));
  CHECK_THAT(error_of<ConfigError>([&] { config.set("gamma", 1.5); }), Catch::Contains("in [0, 1]"));
  CHECK_THAT(error_of<ConfigError>([&] { config.set("num_workers", std::string("two")); }),
             Catch::Contains("expected an integer >= 0"));
  CHECK_THAT(error_of<ConfigError>([&] { config.set("hidden_sizes", IntList{64, 0}); }),
             Catch::Contains("each >= 1"));
  CHECK_THAT(error_of<ConfigError>([&] { config.set("lr_schedule", std::string("cosine")); }),
             Catch::Contains("one of \"constant\", \"linear\""));
  CHECK_THAT(error_of<ConfigError>([&] { config.set("device", std::string("gpu")); }),
             Catch::Contains("\"cpu\", \"cuda\" or \"cuda:N\""));
  config.set("device", std::string("cuda:1"));
  CHECK(config.common().device == "cuda:1");
  config.set_json("hidden_sizes", nlohmann::json::array({32}));
  CHECK(config.common().hidden_sizes == IntList{32});
  CHECK_THROWS_AS(config.set_json("double_q", "yes"), ConfigError);
  CHECK(config.ppo().lr == 1.0);  // failed sets leave the value alone
}

TEST_CASE("Values parse from text per type", "[core][config]") {
  auto parse = [](ConfigType type, const char* text) { return parse_value(type, text); };
  CHECK(std::get<int64_t>(*parse(ConfigType::kInt, "42")) == 42);
  CHECK(std::get<int64_t>(*parse(ConfigType::kInt, "1e5")) == 100000);
  CHECK(std::get<int64_t>(*parse(ConfigType::kInt, "-3")) == -3);
  CHECK_FALSE(parse(ConfigType::kInt, "2.5"));
  CHECK_FALSE(parse(ConfigType::kInt, "abc"));
  CHECK(std::get<double>(*parse(ConfigType::kFloat, "1e-3")) == 1e-3);
  CHECK(std::get<double>(*parse(ConfigType::kFloat, "+0.5")) == 0.5);
  CHECK_FALSE(parse(ConfigType::kFloat, "0.5x"));
  CHECK_FALSE(parse(ConfigType::kFloat, "inf"));
  CHECK(std::get<bool>(*parse(ConfigType::kBool, "false")) == false);
  CHECK(std::get<bool>(*parse(ConfigType::kBool, "True")) == true);
  CHECK_FALSE(parse(ConfigType::kBool, "1"));
  CHECK(std::get<IntList>(*parse(ConfigType::kIntList, "[256, 256]")) == IntList{256, 256});
  CHECK(std::get<IntList>(*parse(ConfigType::kIntList, "256,128")) == IntList{256, 128});
  CHECK(std::get<IntList>(*parse(ConfigType::kIntList, "[32]")) == IntList{32});
  CHECK_FALSE(parse(ConfigType::kIntList, "32"));  // one integer is no list: [32] is
  CHECK_FALSE(parse(ConfigType::kIntList, ""));
  CHECK(std::get<IntList>(*parse(ConfigType::kIntList, "[]")).empty());
  CHECK_FALSE(parse(ConfigType::kIntList, "[1, x]"));
  CHECK_FALSE(parse(ConfigType::kIntList, "[1, 2"));
  CHECK(std::get<std::string>(*parse(ConfigType::kString, "relu")) == "relu");
}

TEST_CASE("Doubles format to the shortest text that reads back exactly", "[core][config]") {
  CHECK(format_double(3e-4) == "0.0003");
  CHECK(format_double(0.99) == "0.99");
  CHECK(format_double(1.0) == "1.0");
  CHECK(format_double(100000.0) == "100000.0");
  CHECK(format_double(1e-5) == "1e-05");
  CHECK(format_double(0.1 + 0.2) == "0.30000000000000004");
  CHECK(format_value(IntList{64, 64}) == "[64, 64]");
  CHECK(format_value(true) == "true");
}

TEST_CASE("Numbers for people round to 4 significant digits, keeping the digits before the point", "[core][config]") {
  CHECK(format_readable(0.8378000034019353) == "0.8378");
  CHECK(format_readable(-1.77123) == "-1.771");
  CHECK(format_readable(500.0) == "500.0");
  CHECK(format_readable(499.96) == "500.0");
  CHECK(format_readable(5837.6) == "5838.0");
  CHECK(format_readable(123456.7) == "123457.0");  // never 1.235e+05
  CHECK(format_readable(-23.45678) == "-23.46");
  CHECK(format_readable(0.000314159) == "0.0003142");
  CHECK(format_readable(3.14159e-5) == "3.142e-05");
  CHECK(format_readable(0.0) == "0.0");
  CHECK(format_readable(std::nan("")) == "nan");
  CHECK(format_readable(-HUGE_VAL) == "-inf");
}

TEST_CASE("Typo suggestions pick the closest key", "[core][config]") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(closest_match("learning_rat", {"lr", "learning_starts", "gamma"}) == std::optional<std::string>("learning_starts"));
  CHECK(closest_match("num_worker", {"num_workers", "num_learners"}) == std::optional<std::string>("num_workers"));
  CHECK_FALSE(closest_match("zzzzzz", {"lr", "gamma"}));
}

TEST_CASE("A name that begins a candidate or is one of its words suggests it", "[core][config]") {
  const std::vector<std::string> keys = {"grad_clip", "clip_param", "vf_clip_param", "clip_schedule", "entropy_coeff",
                                         "num_workers", "num_envs_per_worker", "lr"};
  CHECK(closest_match("entropy", keys) == std::optional<std::string>("entropy_coeff"));
  // A prefix before a word (grad_clip is shorter), the shortest of several prefixes.
  CHECK(closest_match("clip", keys) == std::optional<std::string>("clip_param"));
  CHECK(closest_match("workers", keys) == std::optional<std::string>("num_workers"));
  CHECK(closest_match("Entropy", keys) == std::optional<std::string>("entropy_coeff"));
  CHECK(closest_match("cartpole", {"Acrobot-v1", "CartPole-v1"}) == std::optional<std::string>("CartPole-v1"));
  CHECK(closest_match("v1", {"CartPole-v1"}) == std::nullopt);  // under 4 characters: too loose
  CHECK(closest_match("orkers", keys) == std::nullopt);         // inside a word is no word
  // A typo within the edit distance still wins: "num_worker" is num_workers, not num_envs_per_worker.
  CHECK(closest_match("num_worker", keys) == std::optional<std::string>("num_workers"));
  // Among equally good matches, the first listed.
  CHECK(containing_match("clip", {"clip_a", "clip_b"}) == std::optional<std::string>("clip_a"));
}

TEST_CASE("The PPO train batch defaults to one round of fragments", "[core][config]") {
  Config config;
  CHECK(effective_train_batch_size(config) == 2 * 8 * 64);
  config.set("num_workers", int64_t{0});
  CHECK(effective_train_batch_size(config) == 8 * 64);
  config.set("train_batch_size", int64_t{4000});
  CHECK(effective_train_batch_size(config) == 4000);
  config.set("train_batch_size", int64_t{100});
  CHECK(effective_train_batch_size(config) == 8 * 64);  // at least one fragment
}

TEST_CASE("Config JSON holds exactly the keys of the algorithm", "[core][config]") {
  const Config config;
  const auto ppo = config.to_json(AlgorithmKind::kPPO);
  const auto dqn = config.to_json(AlgorithmKind::kDQN);
  CHECK(ppo.contains("clip_param"));
  CHECK_FALSE(ppo.contains("buffer_size"));
  CHECK(dqn.contains("buffer_size"));
  CHECK_FALSE(dqn.contains("clip_param"));
  CHECK(ppo["hidden_sizes"] == nlohmann::json::array({64, 64}));
  CHECK(ppo["lr"].get<double>() == 3e-4);
  size_t expected = 0;
  for (const auto& key : config_schema()) expected += key.applies_to(AlgorithmKind::kPPO) ? 1 : 0;
  CHECK(ppo.size() == expected);
}
