// The fragment-contract fuzz target's body, shared by the libFuzzer binary
// (fragment_contract_fuzz.cc) and the sanitizer test suite (fragment_contract_fuzz_test.cc):
// arbitrary frames are decoded with a receiver's limits and checked against a CartPole
// contract; nothing may crash, and whatever the check accepts must really keep the contract.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <variant>

#include "tests/transport/fuzz/fuzz_frames.h"
#include "transport/decode.h"
#include "transport/episode_tracker.h"
#include "transport/fragment_contract.h"

namespace rlx {

// The contract the target checks against: CartPole, T = 16, K = 4, PPO's columns.
inline FragmentContract fuzz_contract() {
  FragmentContract contract;
  contract.num_steps = 16;
  contract.num_envs = 4;
  contract.obs_size = 4;
  contract.action_categories = {2};
  contract.policy_outputs = true;
  return contract;
}

// Aborts (a crash for the fuzzer and the test) when an accepted fragment breaks the contract.
inline void require_kept(bool kept) {
  if (!kept) std::abort();
}

// What became of one input.
enum class FuzzOutcome { kNotAFragment, kRefused, kAccepted };

inline FuzzOutcome fuzz_fragment_contract(const uint8_t* data, size_t size) {
  DecodeLimits limits;
  limits.max_message_bytes = 1 << 20;
  limits.num_actions = 2;
  limits.max_envs = 8;
  limits.max_transitions = 16 * 8;
  const std::vector<zmq::message_t> frames = split_fuzz_input(data, size);
  DecodeResult result = decode_message(frames, limits);
  if (!result.ok()) return FuzzOutcome::kNotAFragment;
  const auto* batch = std::get_if<SampleBatch>(&*result.message);
  if (!batch) return FuzzOutcome::kNotAFragment;
  const FragmentContract contract = fuzz_contract();
  if (check_fragment(*batch, contract)) return FuzzOutcome::kRefused;  // fine, whatever it was
  require_kept(batch->num_steps == contract.num_steps && batch->num_envs == contract.num_envs);
  require_kept(batch->obs_size == contract.obs_size && batch->action_size == 0);
  require_kept(batch->log_probs.size() == 64 && batch->values.size() == 64);
  for (float value : batch->obs) require_kept(std::isfinite(value));
  for (float value : batch->rewards) require_kept(std::isfinite(value));
  for (float value : batch->final_obs) require_kept(std::isfinite(value));
  require_kept(batch->state_size == 0 && batch->initial_states.empty());  // the contract's model is memoryless
  for (int64_t action : batch->action_indices) require_kept(action >= 0 && action < 2);
  size_t ends = 0;
  for (size_t i = 0; i < batch->terminated.size(); ++i) ends += (batch->terminated[i] | batch->truncated[i]) ? 1 : 0;
  require_kept(ends == batch->final_obs_index.size());
  require_kept(fragment_bytes(*batch) <= max_fragment_bytes(contract));
  EpisodeTracker tracker(500);
  EpisodeReport report;
  require_kept(!tracker.add(*batch, report));  // 16 steps cannot pass a 500-step limit
  require_kept(report.returns.size() <= ends);
  return FuzzOutcome::kAccepted;
}

}  // namespace rlx
