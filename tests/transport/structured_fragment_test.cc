// Fragments of structured observations on the wire: the byte columns and [T, K, D] action
// indices round-trip, a hello announces them, and the learner's contract refuses missing bytes,
// an action outside its space and one the observation's mask forbids.
#include <memory>

#include <catch2/catch.hpp>

#include "core/observation_layout.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/fragment_contract.h"
#include "transport/sample_receiver.h"

namespace rlx {
namespace {

// Dict('grid': Box(0, 1, (2, 2), uint8), 'level': Discrete(3)) with masked MultiDiscrete([3 2]) actions.
EnvSpec board_spec() {
  EnvSpec spec;
  spec.id = "Board-v0";
  spec.observation_space = Space::dict({{"grid", Space::box({2, 2}, 0, 1, ScalarType::kUint8)}, {"level", Space::discrete(3)}});
  spec.action_space = Space::multi_discrete({3, 2});
  spec.action_mask = true;
  spec.max_episode_steps = 100;
  return spec;
}

// T = 2, K = 2 of the board: byte rows of 4 grid bytes and a 5-byte mask that forbids element 0's action 0.
SampleBatch board_fragment() {
  SampleBatch batch;
  batch.policy_version = 1;
  batch.resize(2, 2, 1, 0, true, 4 + 5, 2);
  for (size_t row = 0; row < 4; ++row) {
    const uint8_t bytes[9] = {1, 0, 0, 1, 0, 1, 1, 1, 1};
    std::copy(bytes, bytes + 9, batch.obs_u8.begin() + static_cast<std::ptrdiff_t>(row * 9));
    batch.action_indices[row * 2] = 1 + static_cast<int64_t>(row % 2);
    batch.action_indices[row * 2 + 1] = static_cast<int64_t>(row % 2);
  }
  batch.terminated[3] = 1;
  batch.final_obs_index = {3};
  batch.final_obs = {2.0f};
  batch.final_obs_u8 = {1, 1, 1, 1, 0, 1, 1, 1, 1};
  return batch;
}

FragmentContract board_contract() {
  const ExpectedEnv env = ExpectedEnv::of(board_spec());
  FragmentContract contract;
  contract.num_steps = 2;
  contract.num_envs = 2;
  contract.obs_size = env.obs_size;
  contract.obs_bytes = env.obs_bytes;
  contract.action_categories = env.action_categories;
  contract.mask_offset = env.mask_offset;
  contract.mask_size = env.mask_size;
  contract.policy_outputs = true;
  return contract;
}

std::string fault_of(const SampleBatch& batch) {
  const std::optional<FragmentRefusal> refusal = check_fragment(batch, board_contract());
  return refusal ? std::string(fragment_fault_name(refusal->fault)) + ": " + refusal->detail : "kept";
}

}  // namespace

TEST_CASE("a fragment of byte observations and MultiDiscrete actions round-trips the wire", "[transport]") {
  auto batch = std::make_shared<SampleBatch>(board_fragment());
  const DecodeResult result = decode_message(encode_sample_fragment(batch, 3));
  INFO(result.detail);
  REQUIRE(result.ok());
  const SampleBatch& got = std::get<SampleBatch>(*result.message);
  CHECK(got.obs_byte_size == 9);
  CHECK(got.action_components == 2);
  CHECK(got.obs_u8 == batch->obs_u8);
  CHECK(got.bootstrap_obs_u8 == batch->bootstrap_obs_u8);
  CHECK(got.final_obs_u8 == batch->final_obs_u8);
  CHECK(got.action_indices == batch->action_indices);
  CHECK(fault_of(got) == "kept");
}

TEST_CASE("the expected env of a structured spec counts floats, bytes, categories and the mask", "[transport]") {
  const ExpectedEnv env = ExpectedEnv::of(board_spec());
  CHECK(env.obs_size == 1);
  CHECK(env.obs_bytes == 4 + 5);
  CHECK(env.action_categories == std::vector<int64_t>{3, 2});
  CHECK(env.num_actions == 5);
  CHECK(env.mask_offset == 4);
  CHECK(env.mask_size == 5);
  Hello hello;
  hello.env_id = "Board-v0";
  hello.num_envs = 2;
  hello.obs_size = env.obs_size;
  hello.obs_bytes = env.obs_bytes;
  hello.num_actions = env.num_actions;
  hello.action_components = 2;
  const DecodeResult result = decode_message(encode_hello(hello, 1));
  REQUIRE(result.ok());
  CHECK(std::get<Hello>(*result.message).obs_bytes == 9);
  CHECK(std::get<Hello>(*result.message).action_components == 2);
}

TEST_CASE("the contract refuses an action outside its space and one its observation's mask forbids", "[transport][contract]") {
  CHECK(fault_of(board_fragment()) == "kept");
  SampleBatch outside = board_fragment();
  outside.action_indices[3] = 2;  // element 1 of step 1 holds 0..1
  CHECK(fault_of(outside) == "illegal_action: step 1 action element 1 is 2, outside [0, 2)");
  SampleBatch masked = board_fragment();
  masked.action_indices[4] = 0;  // element 0's action 0 is masked in every observation
  CHECK(fault_of(masked) == "illegal_action: step 2 took action 0 (element 0), which its observation's mask forbids");
  SampleBatch short_bytes = board_fragment();
  short_bytes.obs_byte_size = 4;
  CHECK(fault_of(short_bytes).rfind("wrong_obs_size", 0) == 0);
}

TEST_CASE("a fragment without the byte columns its env has is refused by the contract", "[transport][contract]") {
  SampleBatch without = board_fragment();
  without.obs_byte_size = 0;
  without.obs_u8.clear();
  without.bootstrap_obs_u8.clear();
  without.final_obs_u8.clear();
  const DecodeResult plain = decode_message(encode_sample_fragment(std::make_shared<SampleBatch>(without), 1));
  REQUIRE(plain.ok());
  CHECK(fault_of(std::get<SampleBatch>(*plain.message)) == "wrong_obs_size: observation bytes is 0, the run's contract says 9");
}
}  // namespace rlx
