// The multi-agent parts of the wire: a fragment's policy and lane, the policy a weights message
// is for, and a worker's per-agent episode returns; each round-trips, is absent from single-agent
// messages, and is refused when malformed.
#include <cstring>
#include <memory>

#include <catch2/catch.hpp>

#include "tests/transport/transport_test_util.h"
#include "transport/decode.h"
#include "transport/encode.h"

namespace rlx {
namespace {

// Overwrites the int64 at `index` of column frame `frame` in a deep copy.
std::vector<zmq::message_t> with_int64(const std::vector<zmq::message_t>& frames, size_t frame, size_t index, int64_t value) {
  std::vector<zmq::message_t> out = test::deep_copy(frames);
  std::memcpy(static_cast<unsigned char*>(out[frame].data()) + index * sizeof(int64_t), &value, sizeof value);
  return out;
}

std::string rejection(const std::vector<zmq::message_t>& frames) {
  const DecodeResult result = decode_message(frames);
  return result.ok() ? "accepted" : reject_reason_name(*result.reject) + std::string(": ") + result.detail;
}

}  // namespace

TEST_CASE("A multi-agent fragment carries its policy and lane, a single-agent one neither", "[transport][multi_agent]") {
  auto batch = test::make_batch(6, 1, 4, true);
  batch->policy_index = 2;
  batch->lane = 13;
  const auto frames = encode_sample_fragment(batch, 5);
  const DecodeResult result = decode_message(frames);
  REQUIRE(result.ok());
  const auto& got = std::get<SampleBatch>(*result.message);
  test::require_same_batch(*batch, got);
  CHECK(got.policy_index == 2);
  CHECK(got.lane == 13);

  const auto single = decode_message(encode_sample_fragment(test::make_batch(6, 1, 4, true), 6));
  REQUIRE(single.ok());
  CHECK(std::get<SampleBatch>(*single.message).policy_index == -1);
  CHECK(std::get<SampleBatch>(*single.message).lane == -1);

  const size_t column = test::descriptor_index(frames, ColumnId::kPolicyLane);
  CHECK(rejection(with_int64(frames, column + 1, 0, -1)) == "value_out_of_range: policy_lane outside [0, 2^31)");
  CHECK(rejection(with_int64(frames, column + 1, 1, int64_t{1} << 40)) == "value_out_of_range: policy_lane outside [0, 2^31)");

  // A lane is one agent of one env: K = 1, and both ids go together.
  auto wide = test::make_batch(6, 2, 4, true);
  wide->policy_index = 0;
  wide->lane = 0;
  CHECK_THROWS_WITH(encode_sample_fragment(wide, 7), Catch::Contains("K = 1"));
  batch->lane = -1;
  CHECK_THROWS_WITH(encode_sample_fragment(batch, 8), Catch::Contains("a policy, a lane"));
}

TEST_CASE("Weights name the multi-agent policy they are for", "[transport][multi_agent]") {
  auto weights = std::make_shared<Weights>();
  weights->policy_version = 4;
  weights->params = {1.f, 2.f, 3.f};
  weights->policy_index = 3;
  const auto frames = encode_weights(weights, 0, 1);
  const DecodeResult result = decode_message(frames);
  REQUIRE(result.ok());
  CHECK(std::get<Weights>(*result.message).policy_index == 3);
  CHECK(std::get<Weights>(*result.message).params == weights->params);
  const size_t column = test::descriptor_index(frames, ColumnId::kPolicyIndex);
  CHECK(rejection(with_int64(frames, column + 1, 0, -5)) == "value_out_of_range: policy_index outside [0, 2^31)");

  // A frozen policy told to play a scripted rule: no parameters, the rule's name.
  auto rule = std::make_shared<Weights>();
  rule->policy_index = 1;
  rule->scripted = "connect_four_lookahead";
  const DecodeResult ruled = decode_message(encode_weights(rule, 0, 3));
  REQUIRE(ruled.ok());
  CHECK(std::get<Weights>(*ruled.message).scripted == "connect_four_lookahead");
  CHECK(std::get<Weights>(*ruled.message).params.empty());
  rule->params = {1.f};
  CHECK_THROWS_AS(encode_weights(rule, 0, 4), std::invalid_argument);
  rule->params.clear();
  rule->policy_index = -1;
  CHECK_THROWS_AS(encode_weights(rule, 0, 5), std::invalid_argument);

  weights->policy_index = -1;
  const DecodeResult single = decode_message(encode_weights(weights, 0, 2));
  REQUIRE(single.ok());
  CHECK(std::get<Weights>(*single.message).policy_index == -1);
}

TEST_CASE("A multi-agent worker's episodes carry each agent's return and policy", "[transport][multi_agent]") {
  EpisodeStats stats;
  stats.returns = {3.0, -1.0};
  stats.lengths = {10, 7};
  stats.num_agents = 3;
  stats.agent_returns = {1.0, 2.0, 0.0, -1.0, 0.0, 0.0};
  stats.agent_policies = {0, 1, -1, 1, 1, 0};
  stats.env_steps = 17;
  stats.policy_agent_steps = {12, 9};
  const auto frames = encode_episode_stats(stats, 9, 1);
  const DecodeResult result = decode_message(frames);
  REQUIRE(result.ok());
  const auto& got = std::get<EpisodeStats>(*result.message);
  CHECK(got.num_agents == 3);
  CHECK(got.agent_returns == stats.agent_returns);
  CHECK(got.agent_policies == stats.agent_policies);
  CHECK(got.returns == stats.returns);
  CHECK(got.env_steps == 17);
  CHECK(got.policy_agent_steps == stats.policy_agent_steps);

  // Both columns or neither, each [E, N].
  stats.agent_policies.pop_back();
  CHECK_THROWS_AS(encode_episode_stats(stats, 9, 2), std::invalid_argument);
  stats.agent_policies = {0, 1, -2, 1, 1, 0};
  CHECK_THROWS_AS(encode_episode_stats(stats, 9, 3), std::invalid_argument);
  const size_t policies = test::descriptor_index(frames, ColumnId::kAgentPolicies);
  const auto reshaped = test::with_descriptor(frames, policies, [](ColumnDescriptor& d) { d.dims[0] = 3; d.dims[1] = 2; });
  CHECK(rejection(reshaped) == "inconsistent_dims: agent_returns and agent_policies are not both [E, N >= 1]");

  EpisodeStats steps_only;  // env steps without an episode ended
  steps_only.num_agents = 3;
  steps_only.env_steps = 64;
  const DecodeResult steps = decode_message(encode_episode_stats(steps_only, 9, 5));
  REQUIRE(steps.ok());
  CHECK(std::get<EpisodeStats>(*steps.message).env_steps == 64);
  CHECK(std::get<EpisodeStats>(*steps.message).returns.empty());
  const size_t env_steps = test::descriptor_index(frames, ColumnId::kEnvSteps);
  CHECK(rejection(with_int64(frames, env_steps + 1, 0, -3)) == "value_out_of_range: env_steps out of range");

  const DecodeResult single = decode_message(encode_episode_stats({{1.0}, {5}}, 9, 4));
  REQUIRE(single.ok());
  CHECK(std::get<EpisodeStats>(*single.message).num_agents == 0);
  CHECK(std::get<EpisodeStats>(*single.message).agent_returns.empty());
}

}  // namespace rlx
