// A SampleReceiver of a multi-agent run, over real sockets: fragments are lanes that name their
// policy, checked against that policy's contract and versions; a frozen policy's fragments, and
// fragments without a policy, are refused; weights go out per policy; the workers' episode
// reports are checked before they are kept.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "tests/transport/hostile_peer.h"
#include "transport/sample_receiver.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;
using test::HostilePeer;

constexpr int32_t kSteps = 8;

// Two policies over CartPole-like agents: "runner" (index 0) trains, "statue" (1) is frozen.
ReceiverOptions two_policies() {
  ReceiverOptions options;
  options.env = {"MultiAgentCartPole-v0", 0, 0, 0, 500};
  const ExpectedEnv agent{"MultiAgentCartPole-v0", 4, 0, 2, 500};
  options.policies = {{agent, true, 0, true}, {agent, true, 0, false}};
  options.num_agents = 2;
  options.fragment_length = kSteps;
  options.max_envs_per_worker = 8;
  options.credits_per_worker = 4;
  options.heartbeat_interval = 100ms;
  options.make_welcome = [](int) { return std::string(R"({"env_id": "MultiAgentCartPole-v0"})"); };
  return options;
}

std::shared_ptr<Weights> weights(int32_t policy, uint64_t version) {
  auto w = std::make_shared<Weights>();
  w->policy_index = policy;
  w->policy_version = version;
  w->params.assign(8, 0.5f);
  return w;
}

SampleBatch lane(int32_t policy, int32_t lane_id, uint64_t version) {
  SampleBatch batch = test::contract_fragment(kSteps, 1, version);
  batch.policy_index = policy;
  batch.lane = lane_id;
  return batch;
}

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 5000ms;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

}  // namespace

TEST_CASE("A multi-agent receiver takes lanes of the policies that train, each checked against its own versions",
          "[transport][multi_agent]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, two_policies());
  receiver.publish_weights(weights(0, 3));
  receiver.publish_weights(weights(1, 1));
  CHECK_THROWS_WITH(receiver.publish_weights(weights(2, 1)), Catch::Contains("policy index 2 in a run of 2"));
  CHECK_THROWS_AS(receiver.publish_weights(weights(-1, 1)), std::invalid_argument);
  HostilePeer worker(context, receiver.endpoint(), 4);
  worker.set_env_id("MultiAgentCartPole-v0");
  REQUIRE(worker.join());

  worker.send_fragment(lane(0, 3, 3));
  const auto got = receiver.pop(2000ms);
  REQUIRE(got);
  CHECK(got->policy_index == 0);
  CHECK(got->lane == 3);
  CHECK(got->num_envs == 1);
  // Policy 0's versions, not policy 1's: version 1 is current for policy 1 but stale for policy 0,
  // and version 9 was never published.
  worker.send_fragment(lane(0, 3, 1));
  CHECK(eventually([&] { return receiver.stats().dropped_stale == 1; }));
  worker.send_fragment(lane(0, 3, 9));
  CHECK(eventually([&] { return receiver.stats().refused == 1; }));
  CHECK_THAT(receiver.stats().fault_counts, Catch::Contains("unpublished_version=1"));
}

TEST_CASE("A multi-agent receiver refuses a frozen policy's lanes and fragments that name no policy",
          "[transport][multi_agent]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, two_policies());
  receiver.publish_weights(weights(0, 1));
  receiver.publish_weights(weights(1, 1));
  const auto refused_with = [&](const SampleBatch& batch, uint64_t refusals) {
    HostilePeer peer(context, receiver.endpoint(), 4);
    peer.set_env_id("MultiAgentCartPole-v0");
    REQUIRE(peer.join());
    peer.send_fragment(batch);
    CHECK(eventually([&] { return receiver.stats().refused == refusals; }));
    CHECK(eventually([&] {
      peer.read(10ms);
      return peer.stopped();
    }));
  };
  refused_with(lane(1, 0, 1), 1);  // frozen: it acts, it does not learn
  refused_with(lane(7, 0, 1), 2);  // no such policy
  SampleBatch anonymous = test::contract_fragment(kSteps, 1, 1);
  refused_with(anonymous, 3);
  CHECK_THAT(receiver.stats().fault_counts, Catch::Contains("wrong_policy=3"));
  CHECK(receiver.stats().fragments_consumed == 0);
}

TEST_CASE("A single-agent receiver refuses a fragment that names a policy", "[transport][multi_agent]") {
  zmq::context_t context(1);
  ReceiverOptions options = two_policies();
  options.env = options.policies[0].env;
  options.env.env_id = "CartPole-v1";
  options.policies.clear();
  options.num_agents = 0;
  options.make_welcome = [](int) { return std::string(R"({"env_id": "CartPole-v1"})"); };
  SampleReceiver receiver(context, options);
  receiver.publish_weights(weights(-1, 1));
  CHECK_THROWS_AS(receiver.publish_weights(weights(0, 2)), std::invalid_argument);
  HostilePeer peer(context, receiver.endpoint(), 1);
  REQUIRE(peer.join());
  peer.send_fragment(lane(0, 0, 1));
  CHECK(eventually([&] { return receiver.stats().refused == 1; }));
  CHECK_THAT(receiver.stats().fault_counts, Catch::Contains("wrong_policy=1"));
}

TEST_CASE("A multi-agent worker's episode reports are kept only when they fit the run", "[transport][multi_agent]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, two_policies());
  receiver.publish_weights(weights(0, 1));
  HostilePeer worker(context, receiver.endpoint(), 4);
  worker.set_env_id("MultiAgentCartPole-v0");
  REQUIRE(worker.join());
  EpisodeStats report;
  report.returns = {30.0};
  report.lengths = {20};
  report.num_agents = 2;
  report.agent_returns = {20.0, 10.0};
  report.agent_policies = {0, 1};
  report.env_steps = 20;
  report.policy_agent_steps = {25, 15};
  worker.send(encode_episode_stats(report, 666, 100));
  EpisodeStats three_agents = report;  // the env has two
  three_agents.num_agents = 3;
  three_agents.agent_returns = {1.0, 2.0, 3.0};
  three_agents.agent_policies = {0, 0, 0};
  worker.send(encode_episode_stats(three_agents, 666, 101));
  EpisodeStats unknown_policy = report;
  unknown_policy.agent_policies = {0, 5};
  worker.send(encode_episode_stats(unknown_policy, 666, 102));
  EpisodeStats not_finite = report;
  not_finite.agent_returns[1] = std::nan("");
  worker.send(encode_episode_stats(not_finite, 666, 103));
  EpisodeStats three_policies = report;  // the run has two
  three_policies.policy_agent_steps = {1, 2, 3};
  worker.send(encode_episode_stats(three_policies, 666, 106));
  EpisodeStats single = {{5.0}, {5}};  // a single-agent worker's report
  worker.send(encode_episode_stats(single, 666, 104));
  EpisodeStats too_many_steps = report;  // more than T x the lanes a worker may have: not even decoded
  too_many_steps.env_steps = kSteps * 8 + 1;
  worker.send(encode_episode_stats(too_many_steps, 666, 105));
  CHECK(eventually([&] { return receiver.stats().unexpected_messages == 5 && receiver.stats().messages_rejected == 1; }));
  const EpisodeReport kept = receiver.take_episodes();
  REQUIRE(kept.returns.size() == 1);
  CHECK(kept.returns[0] == 30.0);
  CHECK(kept.num_agents == 2);
  CHECK(kept.agent_returns == report.agent_returns);
  CHECK(kept.agent_policies == report.agent_policies);
  CHECK(kept.env_steps == 20);
  CHECK(kept.policy_agent_steps == std::vector<int64_t>{25, 15});
  CHECK(receiver.stats().episodes == 1);
}

}  // namespace rlx
