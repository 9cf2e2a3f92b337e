// rlx::Policy: a trained policy exported by `rlx export CHECKPOINT -o policy.rlxp`, run inside
// your own program. Needs no LibTorch, ZeroMQ or MuJoCo: link rlx::policy (find_package(rlx)).
//
//   rlx::Policy policy("policy.rlxp");
//   rlx::PolicyAction action = policy.act(observation, /*deterministic=*/true);
//   // Discrete: action.index; MultiDiscrete / MultiBinary: action.indices; Box: action.values
//   // (clipped to the Box's bounds).
//
// Observations of any space, in the form rlx stores them (core/observation_layout.h): the
// float32 Box, Discrete and MultiDiscrete leaves as floats (float_size() of them, in the
// space's flatten order), the uint8 Box and MultiBinary leaves as bytes (byte_size()), and for a
// Discrete or MultiDiscrete action space an optional action mask (mask_size() bytes, nonzero =
// legal; MultiDiscrete: each element's values one after another). act(std::vector<float>) takes
// the floats alone, for a policy whose observations have no bytes (a float32 Box: the
// observation itself); act(PolicyObservation) takes all three:
//
//   rlx::PolicyObservation obs;
//   obs.bytes = frame.data();  obs.byte_count = frame.size();  // an 84x84x4 uint8 image, HWC
//   obs.mask = legal.data();   obs.mask_count = legal.size();  // optional
//   rlx::PolicyAction action = policy.act(obs);
//
// The file carries the network (its layers and weights) and the observation normalisation of
// training, so act() takes raw observations, exactly as the environment gives them (act flattens
// them as the workers do: Discrete one-hot, uint8 scaled to [0, 1] by its bounds), and returns
// what rlx's own evaluation (`rlx evaluate`) would send to the environment: actions are the
// space's values (Discrete and MultiDiscrete starts included), never one the mask forbids.
// python/rlx_policy.py reads the same files with NumPy alone.
//
// A recurrent policy (trained with use_lstm or use_gru) remembers: its state (state_size() floats,
// the LSTM's h and c or the GRU's h of every recurrent layer) is the caller's, passed in and
// returned, one per episode running. Start each episode from initial_state() (zeros) and hand
// each step the state the step before returned:
//
//   std::vector<float> state = policy.initial_state();     // at every episode's start
//   rlx::PolicyAction action = policy.act(observation, state);
//   state = std::move(action.state);                       // the next step's
//
// act(observation, state) works for every policy (a memoryless one's state is empty), so one
// loop serves both; the stateless act() refuses a recurrent policy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx {

struct PolicyFile;

// A policy file that cannot be used: missing, truncated, damaged (checksum), of another format
// version, or describing a network this build does not know. The message names the file.
class PolicyFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One observation as rlx stores it (see above). Pointers are the caller's, read during act()
// only; a part the policy does not have may stay null with a count of 0.
struct PolicyObservation {
  const float* floats = nullptr;  // float_size() values: float32 Box, Discrete and MultiDiscrete leaves
  size_t float_count = 0;
  const uint8_t* bytes = nullptr;  // byte_size() values: uint8 Box and MultiBinary leaves
  size_t byte_count = 0;
  const uint8_t* mask = nullptr;  // mask_size() values, nonzero = legal; null: every action is legal
  size_t mask_count = 0;
};

// One action: `index` for Discrete, `indices` (action_size() values, row-major) for MultiDiscrete
// and MultiBinary, `values` (action_size() floats) for Box; and from act(observation, state), the
// recurrent state after this step (state_size() floats; empty for a memoryless policy or from the
// stateless act).
struct PolicyAction {
  int64_t index = 0;
  std::vector<int64_t> indices;
  std::vector<float> values;
  std::vector<float> state;
};

// An exported policy, loaded and ready to act. Not thread-safe: give each thread its own.
class Policy {
 public:
  // Reads and checks the file; throws PolicyFileError naming the file and what is wrong. seed
  // starts the generator that stochastic act() draws from.
  explicit Policy(const std::string& path, uint64_t seed = 0);
  // A policy of a file already decoded (models/policy_file.h); `name` names it in messages.
  Policy(const PolicyFile& file, const std::string& name, uint64_t seed = 0);
  ~Policy();
  Policy(Policy&&) noexcept;
  Policy& operator=(Policy&&) noexcept;

  // The action for one raw observation: argmax / mean (Q-networks: greedy) when deterministic,
  // else a draw from the policy (Q-networks: epsilon-greedy with the exploration rate training
  // ended with); never an action the mask forbids. Throws std::invalid_argument naming what was
  // expected on a wrong float, byte or mask count, or a mask that leaves no action (for
  // MultiDiscrete: no value of some element), and on a recurrent policy (pass its state below).
  PolicyAction act(const PolicyObservation& observation, bool deterministic = true);
  // act() of an observation that is floats alone (byte_size() == 0), without a mask; throws
  // std::invalid_argument on a wrong size or when the policy's observations have bytes.
  PolicyAction act(const std::vector<float>& observation, bool deterministic = true);
  PolicyAction act(const float* observation, size_t size, bool deterministic = true);

  // act() of one step of an episode: reads state (state_size() floats: initial_state() at the
  // episode's start, else the previous step's action.state) and returns the action with the next
  // state in action.state; state itself is left as it was. Throws std::invalid_argument as act()
  // does, and on a state of another size.
  PolicyAction act(const PolicyObservation& observation, const std::vector<float>& state, bool deterministic = true);
  PolicyAction act(const std::vector<float>& observation, const std::vector<float>& state, bool deterministic = true);

  // act() of several observations with one forward pass (a server's batch). Deterministic rows get
  // exactly the action, to the bit, that act() of that row alone gives; stochastic rows draw from
  // the generator one after another. states: empty for a memoryless policy, else one per row
  // (each state_size() floats), the next states returned in each action's state. Throws
  // std::invalid_argument as act() does, naming the row.
  std::vector<PolicyAction> act_batch(const std::vector<PolicyObservation>& observations,
                                      const std::vector<const std::vector<float>*>& states, bool deterministic);
  // Checks one observation (its sizes and mask) as act() does, without acting: throws
  // std::invalid_argument naming what was expected.
  void check_observation(const PolicyObservation& observation) const;

  // Floats of recurrent state per episode: 0 for a memoryless policy.
  int64_t state_size() const;
  // True when the policy has a recurrent core (state_size() > 0): act it with its state.
  bool recurrent() const;
  // The state an episode starts from: state_size() zeros.
  std::vector<float> initial_state() const;

  // The observation space, as rlx prints spaces: "Box(0, 255, (84, 84, 4), uint8)",
  // "Dict('grid': ..., 'level': Discrete(3))".
  std::string observation_space() const;
  // Floats per observation (PolicyObservation::floats); observation_size() is the same number.
  int64_t float_size() const;
  int64_t observation_size() const;
  // Bytes per observation (PolicyObservation::bytes), the mask not counted.
  int64_t byte_size() const;
  // Bytes of an action mask: n for Discrete(n), the sum of nvec for MultiDiscrete; 0 when the
  // action space takes none (Box, MultiBinary). Any policy with such actions takes a mask.
  int64_t mask_size() const;
  // True when the policy was trained with masks (its env masks its actions).
  bool trained_with_mask() const;

  // The action space, as rlx prints spaces.
  std::string action_space() const;
  // True for a Discrete action space (act() fills index).
  bool discrete_actions() const;
  // True for Discrete, MultiDiscrete and MultiBinary action spaces (act() fills index or indices).
  bool indexed_actions() const;
  // Discrete: the number of actions; MultiDiscrete and MultiBinary: the number of elements
  // (indices.size()); Box: the number of floats per action.
  int64_t action_size() const;
  // The categorical size of each action element: {n}, nvec, or 2 per MultiBinary bit; empty for Box.
  const std::vector<int64_t>& action_categories() const;
  // Box: the bounds act() clips to (empty otherwise).
  const std::vector<float>& action_low() const;
  const std::vector<float>& action_high() const;
  // Where the policy came from: the env id and algorithm it was trained with.
  const std::string& env_id() const;
  const std::string& algorithm() const;

 private:
  // act() with the state (null for a memoryless policy) checked to be state_size() floats.
  PolicyAction step(const PolicyObservation& observation, const std::vector<float>* state, bool deterministic);
  // Sets up everything from a decoded file; `name` for messages.
  void init(const PolicyFile& file, const std::string& name, uint64_t seed);
  // act_batch without containers: `rows` observations, their states (null: a memoryless policy),
  // the actions written to out[0, rows). act() of one row allocates nothing here.
  void act_rows(const PolicyObservation* observations, size_t rows, const std::vector<float>* const* states, bool deterministic,
                PolicyAction* out);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlx
