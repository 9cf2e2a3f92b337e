// Exported policies over every space rlx carries: a uint8 image through the cnn encoder's conv2d
// layers, Dict and Tuple observations with images (conv2d layers per image, the other keys carried
// through to the dense layer), a Dict of a Discrete and uint8 leaves, masked Discrete (actor-critic and Q-network), masked MultiDiscrete
// and MultiBinary actions. Each .rlxp is written with random weights (no learner trains all of
// these yet); on the same stored observations rlx::Policy (C++), python/rlx_policy.py (NumPy) and
// the workers' RolloutPolicy give the same deterministic actions, stochastic draws never take a
// masked action, and wrong sizes and masks are refused by name.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "models/network_layout.h"
#include "models/policy.h"
#include "models/policy_file.h"
#include "models/rollout_policy.h"
#include "policy_trace.h"
#include "run_rlx.h"

namespace rlx {
namespace {

using test::read_text_file;

struct Case {
  const char* name;
  ModelKind kind;
  Space observation_space;
  Space action_space;
  bool mask;
  const char* encoder;  // "cnn": two conv2d layers (3x3, then 3x3 stride 2) before the dense layer
};

std::vector<Case> cases() {
  const Space image = Space::box({6, 6, 2}, 0, 255, ScalarType::kUint8);
  const Space grid = Space::box({2, 2, 2}, 0, 1, ScalarType::kUint8);
  return {
      {"a uint8 image through conv2d layers, Discrete actions", ModelKind::kActorCritic, image, Space::discrete(4), false,
       "cnn"},
      {"a Dict of a Discrete, a uint8 grid and a float Box, Discrete actions with a start", ModelKind::kActorCritic,
       Space::dict({{"level", Space::discrete(3, 1)}, {"grid", grid}, {"pos", Space::box({2}, -1, 1)}}),
       Space::discrete(3, 2), false, "mlp"},
      {"masked Discrete actions", ModelKind::kActorCritic, Space::box({4}, -1, 1), Space::discrete(5), true, "mlp"},
      {"masked Discrete actions of a Q-network over a Tuple with MultiBinary", ModelKind::kQNetwork,
       Space::tuple({Space::box({3}, -1, 1), Space::multi_binary({4})}), Space::discrete(5), true, "mlp"},
      {"masked MultiDiscrete actions", ModelKind::kActorCritic,
       Space::dict({{"cells", Space::multi_discrete({3, 4})}, {"x", Space::box({2}, -1, 1)}}),
       Space::multi_discrete({3, 4}, {0, 5}), true, "mlp"},
      {"MultiBinary actions", ModelKind::kActorCritic, Space::tuple({Space::box({3}, -1, 1), grid}),
       Space::multi_binary({4}), false, "mlp"},
      {"a Dict of two uint8 images, a Discrete and a float Box, conv2d layers per image, masked actions",
       ModelKind::kActorCritic,
       Space::dict({{"camera", image}, {"level", Space::discrete(3, 1)},
                    {"map", Space::box({5, 5, 1}, 0, 1, ScalarType::kUint8)}, {"pos", Space::box({2}, -1, 1)}}),
       Space::discrete(4), true, "cnn"},
      {"a Q-network over a Tuple of a float Box and a uint8 image through conv2d layers", ModelKind::kQNetwork,
       Space::tuple({Space::box({3}, -1, 1), image}), Space::discrete(5), false, "cnn"},
  };
}

ModelSpec model_of(const Case& c) {
  ModelSpec spec;
  spec.kind = c.kind;
  spec.observation_space = c.observation_space;
  spec.obs_size = c.observation_space.flat_size();
  spec.action_space = c.action_space;
  spec.action_mask = c.mask;
  spec.encoder = c.encoder;
  if (spec.encoder == "cnn") spec.conv_filters = {{8, 3, 1}, {8, 3, 2}};
  spec.hidden_sizes = {16};
  spec.activation = "tanh";
  return spec;
}

// Weights of order-one outputs (each weight ~ N(0, 4 / fan_in), biases ~ N(0, 0.01)), so that actions vary.
std::vector<float> random_parameters(const ModelSpec& spec, uint64_t seed) {
  const bool q = spec.kind == ModelKind::kQNetwork;
  const std::vector<ParameterSpec> parameters =
      q ? q_network_layout(spec).parameters : actor_critic_layout(spec).parameters;
  std::vector<float> flat(q ? q_network_layout(spec).num_parameters : actor_critic_layout(spec).num_parameters);
  Rng rng(seed);
  for (const ParameterSpec& p : parameters) {
    int64_t fan_in = 1;
    for (size_t d = 1; d < p.shape.size(); ++d) fan_in *= p.shape[d];
    const double scale = p.shape.size() == 1 ? 0.1 : 2 / std::sqrt(fan_in);  // small biases: the inputs decide
    for (size_t i = 0; i < p.size; ++i) flat[p.offset + i] = static_cast<float>(rng.normal() * scale);
  }
  return flat;
}

// One observation as stored: floats, the leaves' bytes, and a mask (empty without one).
struct Stored {
  std::vector<float> floats;
  std::vector<uint8_t> bytes, mask;
};

// A random observation of the layout's spaces, with a random mask leaving each element 1 to all legal values.
Stored random_observation(const ObservationLayout& layout, const std::vector<int64_t>& categories, Rng& rng) {
  Stored obs;
  obs.floats.resize(static_cast<size_t>(layout.float_slots));
  obs.bytes.resize(static_cast<size_t>(layout.mask_offset));
  for (const ObsLeaf& leaf : layout.leaves) {
    const Space& space = leaf.space;
    for (int64_t i = 0; i < leaf.slots; ++i) {
      if (leaf.storage == LeafStorage::kBytes) {
        const int64_t span = space.is_multi_binary() ? 2 : static_cast<int64_t>(space.high[i] - space.low[i]) + 1;
        obs.bytes[leaf.offset + i] = static_cast<uint8_t>((space.is_multi_binary() ? 0 : space.low[i]) + rng.uniform_int(span));
      } else if (space.is_box()) {
        obs.floats[leaf.offset + i] = static_cast<float>(rng.uniform(space.low[i], space.high[i]));
      } else {
        const int64_t n = space.is_discrete() ? space.n : space.nvec[i];
        const int64_t start = space.is_discrete() ? space.start : space.starts[i];
        obs.floats[leaf.offset + i] = static_cast<float>(start + rng.uniform_int(n));
      }
    }
  }
  if (layout.mask_size == 0) return obs;
  for (int64_t n : categories) {
    const size_t first = obs.mask.size();
    for (int64_t j = 0; j < n; ++j) obs.mask.push_back(rng.uniform() < 0.5 ? 1 : 0);
    obs.mask[first + rng.uniform_int(n)] = 1;
  }
  return obs;
}

PolicyObservation view(const Stored& obs) {
  PolicyObservation view;
  view.floats = obs.floats.data();
  view.float_count = obs.floats.size();
  view.bytes = obs.bytes.data();
  view.byte_count = obs.bytes.size();
  if (!obs.mask.empty()) {
    view.mask = obs.mask.data();
    view.mask_count = obs.mask.size();
  }
  return view;
}

// The env's values of an action: index or indices.
std::vector<int64_t> action_values(const PolicyAction& action, const Space& space) {
  return space.is_discrete() ? std::vector<int64_t>{action.index} : action.indices;
}

// The worker's deterministic policy of a file, loaded with its weights.
std::unique_ptr<RolloutPolicy> worker_policy(const PolicyFile& file) {
  std::unique_ptr<RolloutPolicy> policy;
  if (file.model.kind == ModelKind::kQNetwork) {
    policy = std::make_unique<EpsilonGreedyQPolicy>(file.model, 0.0, 1);
  } else {
    policy = std::make_unique<ActorCriticPolicy>(file.model, 1, /*deterministic=*/true, /*values=*/false);
  }
  policy->load_weights(file.parameters.data(), file.parameters.size(), 0);
  return policy;
}

// True when every element of an action (values, starts included) is legal under the mask.
bool legal(const std::vector<int64_t>& values, const Space& space, const std::vector<uint8_t>& mask) {
  const std::vector<int64_t> starts = space.is_discrete() ? std::vector<int64_t>{space.start} : space.starts;
  const std::vector<int64_t> counts = space.is_discrete() ? std::vector<int64_t>{space.n} : space.nvec;
  size_t at = 0;
  for (size_t e = 0; e < values.size(); ++e) {
    if (mask[at + static_cast<size_t>(values[e] - starts[e])] == 0) return false;
    at += static_cast<size_t>(counts[e]);
  }
  return true;
}

TEST_CASE("rlx::Policy, the NumPy reader and the workers' policy act alike over every observation and action space",
          "[cli][export][spaces]") {
  constexpr int kSteps = 60;
  for (const Case& c : cases()) {
    SECTION(c.name) {
      const std::string out = test::temp_dir("policy_spaces");
      PolicyFile file;
      file.model = model_of(c);
      file.parameters = random_parameters(file.model, 7);
      file.epsilon = 0.3;
      file.algorithm = c.kind == ModelKind::kQNetwork ? "DQN" : "PPO";
      file.env_id = "Spaces-v0";
      const std::string path = out + "/policy.rlxp";
      std::ofstream(path, std::ios::binary) << encode_policy_file(file);

      Policy policy(path);
      CHECK(policy.observation_space() == c.observation_space.to_string());
      const ObservationLayout layout = file.model.observation_layout();
      CHECK(policy.float_size() == layout.float_slots);
      CHECK(policy.byte_size() == layout.mask_offset);
      CHECK(policy.trained_with_mask() == c.mask);
      CHECK(policy.action_categories() == file.model.action_categories());
      std::unique_ptr<RolloutPolicy> worker = worker_policy(file);
      const std::vector<int64_t> starts = c.action_space.is_discrete()         ? std::vector<int64_t>{c.action_space.start}
                                          : c.action_space.is_multi_discrete() ? c.action_space.starts
                                                                               : std::vector<int64_t>(4, 0);
      Rng rng(3);
      std::ofstream trace(out + "/trace.jsonl");
      std::set<std::vector<int64_t>> seen;
      for (int step = 0; step < kSteps; ++step) {
        const Stored obs = random_observation(layout, policy.action_categories(), rng);
        // The worker's action, from the stored row (the mask last in its bytes).
        std::vector<uint8_t> row = obs.bytes;
        row.insert(row.end(), obs.mask.begin(), obs.mask.end());
        std::vector<int64_t> indices(static_cast<size_t>(worker->action_components()));
        float log_prob = 0;
        worker->act(ObsBatch(obs.floats.data(), row.data()), 1,
                    ActOutput{indices.data(), nullptr, worker->has_policy_outputs() ? &log_prob : nullptr, nullptr});
        for (size_t j = 0; j < indices.size(); ++j) indices[j] += starts[j];

        const std::vector<int64_t> action = action_values(policy.act(view(obs), true), c.action_space);
        INFO("step " << step);
        REQUIRE(action == indices);
        if (c.mask) REQUIRE(legal(action, c.action_space, obs.mask));
        seen.insert(action);
        nlohmann::json line = {{"episode", 0}, {"step", step}, {"obs", obs.floats}};
        if (!obs.bytes.empty()) line["obs_bytes"] = obs.bytes;
        if (!obs.mask.empty()) line["action_mask"] = obs.mask;
        line["action"] = c.action_space.is_discrete() ? nlohmann::json(action[0]) : nlohmann::json(action);
        trace << line.dump() << "\n";
      }
      trace.close();
      CHECK(seen.size() > 1);  // the observations (and masks) move the actions: the comparison means something
      test::check_cpp_reader(path, test::trace_steps(out + "/trace.jsonl"));
      test::check_python_reader(path, out + "/trace.jsonl", out, kSteps);
      std::system(("rm -rf " + out).c_str());
    }
  }
}

TEST_CASE("stochastic actions of both readers never take a masked action, which they take without the mask",
          "[cli][export][spaces]") {
  for (const Case& c : cases()) {
    if (!c.mask) continue;
    SECTION(c.name) {
      const std::string out = test::temp_dir("policy_masked");
      PolicyFile file;
      file.model = model_of(c);
      file.parameters = random_parameters(file.model, 8);
      file.epsilon = 0.5;  // Q-networks: half the draws explore
      file.algorithm = "PPO";
      file.env_id = "Spaces-v0";
      const std::string path = out + "/policy.rlxp";
      std::ofstream(path, std::ios::binary) << encode_policy_file(file);
      Policy policy(path, 5);
      const ObservationLayout layout = file.model.observation_layout();
      Rng rng(4);
      std::ofstream trace(out + "/masked.jsonl");
      int masked_without_mask = 0;
      for (int step = 0; step < 40; ++step) {
        const Stored obs = random_observation(layout, policy.action_categories(), rng);
        for (int draw = 0; draw < 25; ++draw) {
          REQUIRE(legal(action_values(policy.act(view(obs), false), c.action_space), c.action_space, obs.mask));
          Stored unmasked = obs;
          unmasked.mask.clear();
          masked_without_mask += !legal(action_values(policy.act(view(unmasked), false), c.action_space), c.action_space, obs.mask);
        }
        trace << nlohmann::json({{"episode", 0}, {"step", step}, {"obs", obs.floats}, {"obs_bytes", obs.bytes},
                                 {"action_mask", obs.mask}, {"action", 0}})
                     .dump()
              << "\n";
      }
      trace.close();
      CHECK(masked_without_mask > 50);  // without the mask, masked actions are drawn often
      // The NumPy reader: the same draws (its own generator), counted by tests/cli/policy_reader_checks.py.
      const std::string command = std::string(RLX_SYSTEM_PYTHON) + " " + RLX_SOURCE_DIR +
                                  "/tests/cli/policy_reader_checks.py draws " + path + " " + out + "/masked.jsonl > " +
                                  out + "/draws.out 2>&1";
      const int status = std::system(command.c_str());
      const std::string output = read_text_file(out + "/draws.out");
      INFO(output);
      REQUIRE(status == 0);
      const auto summary = nlohmann::json::parse(output.substr(output.rfind('{')));
      CHECK(summary.at("draws") == 40 * 25);
      CHECK(summary.at("illegal") == 0);
      CHECK(summary.at("masked_without_mask").get<int>() > 50);
      std::system(("rm -rf " + out).c_str());
    }
  }
}

TEST_CASE("both readers refuse wrong sizes, wrong masks and a mask that allows nothing, saying what they expected",
          "[cli][export][spaces]") {
  const std::string out = test::temp_dir("policy_refusals");
  const std::vector<Case> all = cases();
  const Case& dict = all[1];      // Dict: 3 floats (level, pos), 8 bytes; Discrete(3, start=2) actions
  const Case& multi = all[4];     // masked MultiDiscrete([3 4])
  const Case& binary = all[5];    // MultiBinary actions: no mask
  auto write = [&](const Case& c, const std::string& name) {
    PolicyFile file;
    file.model = model_of(c);
    file.parameters = random_parameters(file.model, 9);
    file.algorithm = "PPO";
    file.env_id = "Spaces-v0";
    std::ofstream(out + "/" + name, std::ios::binary) << encode_policy_file(file);
    return out + "/" + name;
  };
  Policy dict_policy(write(dict, "dict.rlxp"));
  Policy multi_policy(write(multi, "multi.rlxp"));
  Policy binary_policy(write(binary, "binary.rlxp"));
  REQUIRE(dict_policy.float_size() == 3);
  REQUIRE(dict_policy.byte_size() == 8);
  REQUIRE(dict_policy.mask_size() == 3);  // any Discrete policy takes a mask
  REQUIRE(multi_policy.mask_size() == 7);
  REQUIRE(binary_policy.mask_size() == 0);
  const std::vector<float> floats(3, 0.0f);
  const std::vector<uint8_t> bytes(8, 1), mask7(7, 1), mask3(3, 1);
  PolicyObservation obs{floats.data(), 3, bytes.data(), 8, nullptr, 0};
  CHECK_NOTHROW(dict_policy.act(obs));
  CHECK_THROWS_WITH(dict_policy.act(PolicyObservation{floats.data(), 2, bytes.data(), 8, nullptr, 0}),
                    "Policy::act needs an observation of 3 floats (observation space " + dict.observation_space.to_string() +
                        "), got 2");
  CHECK_THROWS_WITH(dict_policy.act(PolicyObservation{floats.data(), 3, bytes.data(), 7, nullptr, 0}),
                    Catch::StartsWith("Policy::act needs an observation of 8 bytes (observation space Dict(") &&
                        Catch::EndsWith("got 7"));
  CHECK_THROWS_WITH(dict_policy.act(floats),
                    Catch::Contains("have 8 bytes besides their 3 floats; pass a PolicyObservation"));
  CHECK_THROWS_WITH(dict_policy.act(PolicyObservation{floats.data(), 3, bytes.data(), 8, mask7.data(), 7}),
                    "Policy::act needs an action mask of 3 bytes (one per value of action space Discrete(3, start=2)), got 7");
  const std::vector<uint8_t> none(3, 0);
  CHECK_THROWS_WITH(dict_policy.act(PolicyObservation{floats.data(), 3, bytes.data(), 8, none.data(), 3}),
                    "Policy::act got an action mask that allows no action");
  std::vector<uint8_t> second_empty = mask7;
  for (size_t j = 3; j < 7; ++j) second_empty[j] = 0;
  const std::vector<float> multi_floats(4, 0.0f);
  CHECK_THROWS_WITH(multi_policy.act(PolicyObservation{multi_floats.data(), 4, nullptr, 0, second_empty.data(), 7}),
                    "Policy::act got an action mask that allows no value of action element 1 (its 4 bytes are all 0)");
  const std::vector<uint8_t> binary_bytes(8, 0);
  CHECK_THROWS_WITH(binary_policy.act(PolicyObservation{floats.data(), 3, binary_bytes.data(), 8, mask3.data(), 3}),
                    "Policy::act got an action mask, but its action space MultiBinary(4) takes none");

  // The NumPy reader, on the same files (tests/cli/policy_reader_checks.py prints each refusal).
  const std::string command = std::string(RLX_SYSTEM_PYTHON) + " " + RLX_SOURCE_DIR +
                              "/tests/cli/policy_reader_checks.py refusals " + out + " > " + out + "/refusals.out 2>&1";
  const int status = std::system(command.c_str());
  const std::string output = read_text_file(out + "/refusals.out");
  INFO(output);
  REQUIRE(status == 0);
  CHECK_THAT(output, Catch::Contains("act needs observation['level'], which the observation lacks"));
  CHECK_THAT(output, Catch::Contains("act needs observation['grid'] (Box) with 8 values, got 7"));
  CHECK_THAT(output, Catch::Contains("act needs observation as a dict with keys ['level', 'grid', 'pos'], got ndarray"));
  CHECK_THAT(output, Catch::Contains("act needs an action mask of 3 values (one per value of the Discrete action space), got 7"));
  CHECK_THAT(output, Catch::Contains("act got an action mask that allows no action"));
  CHECK_THAT(output, Catch::Contains("act got an action mask that allows no value of action element 1"));
  CHECK_THAT(output, Catch::Contains("act got an action mask, but the action space MultiBinary takes none"));
  std::system(("rm -rf " + out).c_str());
}

}  // namespace
}  // namespace rlx
