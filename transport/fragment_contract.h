// FragmentContract: what a decoded sample fragment must be before it may reach a learner, checked
// against the run's own contract rather than the wire format's: the env's observation and action
// sizes, T and K as granted, the columns the algorithm needs, a recurrent model's initial states
// (exactly when the learner's model has a core), an end-of-episode observation for exactly the
// steps that ended an episode, and finite values throughout. The decoder has already
// checked that the columns agree with each other; this checks that they agree with the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sample_batch.h"
#include "transport/reason_counters.h"

namespace rlx {

// Why a well-formed fragment is refused. Each refusal also drops its sender.
enum class FragmentFault : uint8_t {
  kWrongSteps,              // T is not the granted fragment length
  kWrongEnvs,               // K is not what the worker's hello announced
  kWrongObsSize,            // O is not the env's
  kWrongActionShape,        // Box A or Discrete/Box kind is not the env's
  kMissingPolicyOutputs,    // log_probs/values absent where the algorithm needs them
  kUnexpectedPolicyOutputs, // log_probs/values present where the algorithm has none
  kBadFlag,                 // terminated/truncated not 0 or 1
  kFinalObsMismatch,        // final observations are not exactly the steps that ended an episode
  kNonFinite,               // NaN or infinity in a float column
  kEpisodeTooLong,          // an episode ran past the env's time limit
  kUnpublishedVersion,      // a policy version the learner never published
  kNoCredit,                // sent beyond the credits granted
  kIllegalAction,           // an action index outside its space, or one its observation's mask forbids
  kWrongStateSize,          // initial_states missing for a recurrent model, present for a memoryless one, or S not the model's
  kWrongPolicy,             // multi-agent: no policy, or one the run does not train; single-agent: a policy named
};

constexpr size_t kNumFragmentFaults = static_cast<size_t>(FragmentFault::kWrongPolicy) + 1;

// snake_case name of a fault ("wrong_steps").
const char* fragment_fault_name(FragmentFault fault);

// A refusal: the fault and, for logs, which value broke it.
struct FragmentRefusal {
  FragmentFault fault;
  std::string detail;
};

// The run's contract for one worker's fragments.
struct FragmentContract {
  int32_t num_steps = 0;        // T, the granted fragment length
  int32_t num_envs = 0;         // K, as the worker's hello announced (and the learner accepted)
  int64_t obs_size = 0;         // O: floats per observation
  int64_t action_size = 0;      // A for Box actions, 0 for indexed ones
  bool policy_outputs = false;  // log_probs required, values optional (PPO), or both forbidden (DQN)
  int64_t obs_bytes = 0;        // B: bytes per observation
  std::vector<int64_t> action_categories;  // indexed actions: each element's categories (D = their count;
                                           // empty: one element, its range left to the decoder's limits)
  int64_t mask_offset = 0;      // the action mask's first byte in an observation's bytes
  int64_t mask_size = 0;        // its bytes (the sum of action_categories); 0: no mask
  int64_t state_size = 0;       // S of the learner's model: initial_states [K, S] required when > 0, refused when 0
};

// The first way batch breaks contract, or nothing when it keeps it. Reads every value once.
std::optional<FragmentRefusal> check_fragment(const SampleBatch& batch, const FragmentContract& contract);

// Bytes the fragment's columns take in memory (what a receiver's queue accounts for).
size_t fragment_bytes(const SampleBatch& batch);

// Bytes a fragment that keeps contract can take in memory at most (every column at its largest,
// an end-of-episode observation for every step).
size_t max_fragment_bytes(const FragmentContract& contract);

// Counts of refused fragments by fault ("refused_total=N wrong_steps=N ..."); thread-safe.
class FragmentFaultCounters : public ReasonCounters<FragmentFault, kNumFragmentFaults, fragment_fault_name> {
 public:
  FragmentFaultCounters() : ReasonCounters("refused_total") {}
};

}  // namespace rlx
