// A recurrent policy's fragments: initial_states [K, S] holds each env's state before the
// fragment's first step (zeros before any step, and for an env whose episode ended on the
// previous fragment's last step), and the fragment keeps a recurrent learner's wire contract.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/sample_batch.h"
#include "envs/registry.h"
#include "envs/vector_env.h"
#include "models/network_layout.h"
#include "models/rollout_policy.h"
#include "rollout/fragment_collector.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/fragment_contract.h"

namespace rlx {
namespace {

bool all_zero(const float* row, int64_t count) {
  return std::all_of(row, row + count, [](float value) { return value == 0.0f; });
}

TEST_CASE("a recurrent policy's fragments start from the states it held when each fragment began",
          "[rollout][collector]") {
  const EnvFactory factory = global_env_registry().factory("CartPole-v1");
  ModelSpec spec = ModelSpec::for_env(factory()->spec());
  spec.hidden_sizes = {16};
  spec.core = "lstm";
  spec.core_size = 8;
  const int64_t s = actor_critic_layout(spec).state_size;
  REQUIRE(s > 0);
  constexpr int k = 8;
  constexpr int t = 8;
  ActorCriticPolicy policy(spec, 1);
  REQUIRE(policy.state_size() == s);
  VectorEnv envs(factory, k);
  FragmentCollector collector(envs, policy, t, 21);

  FragmentContract contract;  // what a learner with this model holds the fragments to
  contract.num_steps = t;
  contract.num_envs = k;
  contract.obs_size = 4;
  contract.action_categories = {2};
  contract.policy_outputs = true;
  contract.state_size = s;

  SampleBatch batch;
  std::vector<uint8_t> ended_last_step(k, 0);  // env k's episode ended on the previous fragment's last step
  int zeroed_after_an_end = 0, carried = 0;
  for (int fragment = 0; fragment < 30; ++fragment) {
    INFO("fragment " << fragment);
    const std::vector<float> before = policy.states();  // empty before the first step
    collector.collect(batch);
    REQUIRE_NOTHROW(batch.validate());
    REQUIRE(batch.state_size == s);
    REQUIRE(batch.initial_states.size() == static_cast<size_t>(k * s));
    if (fragment == 0) {
      CHECK(all_zero(batch.initial_states.data(), k * s));
    } else {
      REQUIRE(batch.initial_states == before);
      for (int env = 0; env < k; ++env) {
        const float* row = batch.initial_states.data() + static_cast<size_t>(env * s);
        if (ended_last_step[static_cast<size_t>(env)]) {
          INFO("env " << env << " ended its episode on the previous fragment's last step");
          CHECK(all_zero(row, s));
          ++zeroed_after_an_end;
        } else if (!all_zero(row, s)) {
          ++carried;
        }
      }
    }
    for (int env = 0; env < k; ++env) {
      const size_t last = static_cast<size_t>((t - 1) * k + env);
      ended_last_step[static_cast<size_t>(env)] = batch.terminated[last] | batch.truncated[last];
    }
    // Over the wire, the fragment keeps a recurrent learner's contract with its states intact.
    DecodeResult decoded = decode_message(encode_sample_fragment(std::make_shared<const SampleBatch>(batch), 1));
    INFO(decoded.detail);
    REQUIRE(decoded.ok());
    const auto& received = std::get<SampleBatch>(*decoded.message);
    CHECK(received.initial_states == batch.initial_states);
    const std::optional<FragmentRefusal> refusal = check_fragment(received, contract);
    INFO((refusal ? refusal->detail : std::string("kept")));
    CHECK_FALSE(refusal);
  }
  // The run covered both cases (CartPole's random-policy episodes end every ~20 steps).
  CHECK(zeroed_after_an_end > 0);
  CHECK(carried > 0);
}

}  // namespace
}  // namespace rlx
