// A multi-agent Welcome: its multi_agent part survives the JSON, a malformed one is refused by
// key, and a worker refuses one that does not fit the env's policy map.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "rollout/multi_agent_worker_sampling.h"
#include "tests/rollout/multi_agent_worker_fixture.h"

namespace rlx {
namespace {

using test::multi_agent_setup;

// The Welcome JSON of the fixture's setup with `edit` applied to it.
template <typename Edit>
std::string edited_welcome(Edit edit) {
  nlohmann::json welcome = nlohmann::json::parse(multi_agent_setup().to_json());
  edit(welcome);
  return welcome.dump();
}

// The sampling of the fixture's setup with `edit` applied to its multi-agent part.
template <typename Edit>
void build_edited(Edit edit) {
  WorkerSetup setup = multi_agent_setup();
  auto multi = std::make_shared<MultiAgentWorkerSetup>(*setup.multi_agent);
  edit(*multi);
  setup.multi_agent = multi;
  MultiAgentWorkerSampling sampling(setup);
}

TEST_CASE("A WorkerSetup carries its multi_agent part through the Welcome JSON", "[rollout][setup][multi_agent]") {
  const WorkerSetup setup = multi_agent_setup();
  const WorkerSetup back = WorkerSetup::from_json(setup.to_json());
  REQUIRE(back.multi_agent);
  CHECK(back.multi_agent->setup == setup.multi_agent->setup);
  REQUIRE(back.multi_agent->policies.size() == 3);
  CHECK(back.multi_agent->policies[0]->model == setup.multi_agent->policies[0]->model);
  CHECK_FALSE(back.multi_agent->policies[1].has_value());  // the scripted player
  CHECK(back.multi_agent->policies[2]->fragment_length == 8);
  CHECK(back.to_json() == setup.to_json());

  WorkerSetup single = setup;
  single.multi_agent = nullptr;
  CHECK_FALSE(nlohmann::json::parse(single.to_json()).contains("multi_agent"));
  CHECK_FALSE(WorkerSetup::from_json(single.to_json()).multi_agent);
}

TEST_CASE("A malformed multi_agent part of a Welcome is refused naming the key", "[rollout][setup][multi_agent]") {
  const auto refused = [](const std::string& welcome) {
    CHECK_THROWS_AS(WorkerSetup::from_json(welcome), std::invalid_argument);
    CHECK_THROWS_WITH(WorkerSetup::from_json(welcome), Catch::Contains("worker setup: key 'multi_agent'"));
  };
  refused(edited_welcome([](nlohmann::json& w) { w["multi_agent"] = 5; }));
  refused(edited_welcome([](nlohmann::json& w) { w["multi_agent"] = nlohmann::json::array(); }));
  refused(edited_welcome([](nlohmann::json& w) { w["multi_agent"].erase("policies"); }));
  refused(edited_welcome([](nlohmann::json& w) { w["multi_agent"]["setup"] = "policies"; }));
  refused(edited_welcome([](nlohmann::json& w) { w["multi_agent"]["policies"] = nlohmann::json::array(); }));
  refused(edited_welcome([](nlohmann::json& w) { w["multi_agent"]["policies"] = nlohmann::json::object(); }));
  refused(edited_welcome([](nlohmann::json& w) {
    w["multi_agent"]["policies"] = nlohmann::json::array();
    for (size_t p = 0; p <= kMaxWorkerPolicies; ++p) w["multi_agent"]["policies"].push_back(nullptr);
  }));
  refused(edited_welcome([](nlohmann::json& w) { w["multi_agent"]["policies"][0] = "frozen"; }));
  // A policy's own setup may not nest another multi-agent part.
  refused(edited_welcome([](nlohmann::json& w) { w["multi_agent"]["policies"][0]["multi_agent"] = w["multi_agent"]; }));
  // A policy's own setup is checked as a Welcome is.
  CHECK_THROWS_WITH(WorkerSetup::from_json(edited_welcome([](nlohmann::json& w) { w["multi_agent"]["policies"][2]["num_envs"] = 0; })),
                    Catch::Contains("num_envs"));
}

TEST_CASE("A multi-agent worker refuses a setup that does not fit the env's policy map", "[rollout][setup][multi_agent]") {
  const auto refused = [](auto edit, const std::string& what) {
    INFO("expected: " << what);
    CHECK_THROWS_WITH(build_edited(edit), Catch::Contains("worker setup: multi_agent") && Catch::Contains(what));
  };
  CHECK_NOTHROW(build_edited([](MultiAgentWorkerSetup&) {}));
  refused([](MultiAgentWorkerSetup& m) { m.policies.pop_back(); }, "'policies' has 2 entries, the run has 3 policies");
  refused([](MultiAgentWorkerSetup& m) { m.policies[1] = m.policies[0]; },
          "policy 'random_player' plays by the scripted rule 'random', but 'policies' gives it a model");
  refused([](MultiAgentWorkerSetup& m) { m.policies[0] = std::nullopt; }, "policy 'frozen' has a model, but 'policies' gives it none");
  refused([](MultiAgentWorkerSetup& m) { m.policies[2]->model.obs_size = 6; }, "policy 'trained'");
  refused([](MultiAgentWorkerSetup& m) { m.setup["policy_mapping"].erase("agent_3"); }, "no entry covers agent 'agent_3'");
  refused([](MultiAgentWorkerSetup& m) { m.setup["policies"]["frozen"] = {{"no_such_key", 1}}; }, "unknown config key 'no_such_key'");
  refused([](MultiAgentWorkerSetup& m) { m.setup["policies"]["random_player"] = {{"scripted", "chess_engine"}}; }, "chess_engine");
  refused([](MultiAgentWorkerSetup& m) { m.setup["policies"] = 3; }, "'policies'");
}

TEST_CASE("A multi-agent worker announces envs x agents lanes and is ready once every model policy has weights", "[rollout][multi_agent]") {
  MultiAgentWorkerSampling sampling(multi_agent_setup(3, 8));
  Hello hello;
  sampling.fill_hello(hello);
  CHECK(hello.env_id == test::kMultiAgentCartPole);
  CHECK(hello.num_envs == 12);
  CHECK(sampling.lanes() == 12);
  CHECK(hello.obs_size == 4);
  CHECK(hello.num_actions == 2);
  CHECK(hello.action_size == 0);
  CHECK(sampling.describe() == "MultiAgentCartPole-v0 x 3 envs of 4 agents (12 lanes)");
  CHECK_FALSE(sampling.ready());
  CHECK(sampling.apply(test::agent_weights(test::kTrainedPolicy, 1)).accepted);
  CHECK_FALSE(sampling.ready());  // the frozen policy has a model too
  CHECK(sampling.apply(test::agent_weights(test::kFrozenPolicy, 1)).accepted);
  CHECK(sampling.ready());
}

}  // namespace
}  // namespace rlx
