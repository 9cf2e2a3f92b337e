// Python envs of every Gymnasium space through the bridge (envs/python/python_spaces.h,
// python_observation.h): nested Dict and Tuple observations in flatten order as floats and bytes,
// uint8 images, Discrete / MultiDiscrete / MultiBinary actions as the env's values, RLlib's and
// SB3's action masks, and the spaces and values rlx refuses, each named by its path. The envs are
// in tests/envs/python/space_envs.py.
#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "core/observation_layout.h"
#include "envs/python_env.h"
#include "envs/registry.h"
#include "envs/vector_env.h"

namespace {

using rlx::ScalarType;
using rlx::Space;

const std::string kModule = "python:space_envs:";

// The registered env `name` of space_envs.py (registered on first use).
const rlx::EnvSpec& space_env(const std::string& name) {
  static const bool path_added = [] {
    rlx::add_python_path({std::string(RLX_SOURCE_DIR) + "/tests/envs/python"});
    return true;
  }();
  (void)path_added;
  rlx::register_python_env(kModule + name);
  return rlx::global_env_registry().spec(kModule + name);
}

// One observation of an env: both parts, sized by its layout.
struct Observation {
  std::vector<float> floats;
  std::vector<uint8_t> bytes;
  explicit Observation(const rlx::Env& env)
      : floats(static_cast<size_t>(env.observation_layout().float_slots)),
        bytes(static_cast<size_t>(env.observation_layout().byte_slots)) {}
  rlx::ObsRow row() { return {floats.data(), bytes.data()}; }
  // The last `count` bytes: the action mask.
  std::vector<uint8_t> mask(size_t count) const { return {bytes.end() - static_cast<std::ptrdiff_t>(count), bytes.end()}; }
};

// The message of the error that registering `name` throws; "no error" when it registers.
std::string refusal(const std::string& name) {
  try {
    space_env(name);
  } catch (const rlx::ConfigError& error) {
    return error.what();
  }
  return "no error";
}

// The message of the EnvOutputError that an env of `name` throws within `steps` steps of action 0.
std::string output_error(const std::string& name, int steps) {
  auto env = rlx::global_env_registry().make(space_env(name).id);
  Observation obs(*env);
  rlx::Action action;
  try {
    env->reset(0, obs.row());
    for (int t = 0; t < steps; ++t) env->step(action, obs.row());
  } catch (const rlx::EnvOutputError& error) {
    return error.what();
  }
  return "no error";
}

std::vector<uint8_t> iota_bytes(size_t count, uint8_t first) {
  std::vector<uint8_t> bytes(count);
  std::iota(bytes.begin(), bytes.end(), first);
  return bytes;
}

}  // namespace

TEST_CASE("A nested Dict of every leaf kind arrives in flatten order, as floats and bytes", "[envs][python]") {
  const rlx::EnvSpec& spec = space_env("AllLeaves");
  const Space& space = spec.observation_space;
  REQUIRE(space.kind == rlx::SpaceKind::kDict);
  CHECK(space.keys == std::vector<std::string>{"bits", "counts", "history", "image", "level", "sensors", "steps"});
  CHECK(*space.child("bits") == Space::multi_binary({3}));
  CHECK(*space.child("counts") == Space::multi_discrete({2, 3, 4, 5}, {0, 0, -1, 10}, {2, 2}));
  CHECK(*space.child("history") == Space::tuple({Space::box({1}, -10, 10), Space::discrete(2)}));  // float64 as float32
  CHECK(*space.child("image") == Space::box({2, 2, 3}, 0, 255, ScalarType::kUint8));  // a subclass of Box
  CHECK(*space.child("level") == Space::discrete(3, 1));
  // A bool Box is a uint8 Box of 0/1.
  CHECK(*space.child("sensors") ==
        Space::dict({{"grid", Space::box({2, 2}, 0, 1, ScalarType::kUint8)}, {"position", Space::box({2}, -1, 1)}}));
  CHECK(*space.child("steps") == Space::box({}, 0, 1000));  // a scalar int64 Box as float32
  CHECK_FALSE(spec.action_mask);

  auto env = rlx::global_env_registry().make(spec.id);
  const rlx::ObservationLayout& layout = env->observation_layout();
  CHECK(layout.float_slots == 4 + 1 + 1 + 1 + 2 + 1);  // counts, history[0], history[1], level, position, steps
  CHECK(layout.byte_slots == 3 + 12 + 4);              // bits, image, grid
  Observation obs(*env);
  env->reset(0, obs.row());
  CHECK(obs.floats == std::vector<float>{1, 2, -1, 10, 0, 0, 1, 0.25f, -0.5f, 0});
  std::vector<uint8_t> bytes = {0, 1, 0};
  for (uint8_t b : iota_bytes(12, 0)) bytes.push_back(b);
  for (uint8_t b : {1, 0, 0, 0}) bytes.push_back(b);
  CHECK(obs.bytes == bytes);

  rlx::Action action;
  action.index = 1;
  env->step(action, obs.row());
  CHECK(obs.floats == std::vector<float>{1, 2, 0, 11, 0.5f, 1, 2, 0.25f, -0.5f, 1});
  bytes = {1, 1, 0};
  for (uint8_t b : iota_bytes(12, 1)) bytes.push_back(b);
  for (uint8_t b : {1, 0, 0, 1}) bytes.push_back(b);
  CHECK(obs.bytes == bytes);

  // The model's input: bits 0-2, counts 3-16, history 17-19, image 20-31, level 32-34, grid 35-38, position 39-40, steps 41.
  REQUIRE(layout.flat_size == 42);
  std::vector<float> flat(42);
  rlx::flatten_observations(layout, obs.floats.data(), obs.bytes.data(), 1, flat.data());
  CHECK(std::vector<float>(flat.begin() + 32, flat.begin() + 35) == std::vector<float>{0, 1, 0});  // level 2 of 1..3
  CHECK(flat[20] == Approx(1.0f / 255));
  CHECK(flat[41] == 1.0f);
}

TEST_CASE("A uint8 image crosses as bytes, from contiguous, strided and float64 arrays alike", "[envs][python]") {
  const rlx::EnvSpec& spec = space_env("ImageEnv");
  CHECK(spec.observation_space == Space::box({84, 84, 3}, 0, 255, ScalarType::kUint8));
  auto env = rlx::global_env_registry().make(spec.id);
  Observation obs(*env);
  REQUIRE(obs.floats.empty());
  REQUIRE(obs.bytes.size() == 84 * 84 * 3);
  std::vector<uint8_t> image(obs.bytes.size());
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<uint8_t>(i % 251);
  env->reset(0, obs.row());
  CHECK(obs.bytes == image);
  for (int64_t strided_or_float64 : {0, 1}) {
    std::fill(obs.bytes.begin(), obs.bytes.end(), 0);
    rlx::Action action;
    action.index = strided_or_float64;
    env->step(action, obs.row());
    CHECK(obs.bytes == image);
  }
}

TEST_CASE("Discrete with start, MultiDiscrete and MultiBinary actions reach the env as its space's values", "[envs][python]") {
  SECTION("Discrete(4, start=-2): a Python int") {
    const rlx::EnvSpec& spec = space_env("DiscreteEcho");
    CHECK(spec.action_space == Space::discrete(4, -2));
    auto env = rlx::global_env_registry().make(spec.id);
    Observation obs(*env);
    env->reset(0, obs.row());
    for (int64_t value : {-2, 1}) {
      rlx::Action action;
      action.index = value;
      env->step(action, obs.row());
      CHECK(obs.floats == std::vector<float>{static_cast<float>(value), 0, 0, 0});
    }
    // VectorEnv counts from 0 and adds the start on the way to the env.
    rlx::VectorEnv envs(rlx::global_env_registry().factory(spec.id), 1);
    std::vector<float> floats(4), rewards(1), final_obs(4);
    std::vector<uint8_t> terminated(1), truncated(1);
    envs.reset(0, floats.data());
    const std::vector<int64_t> first = {0};
    envs.step(rlx::ActionBatch{first.data(), nullptr},
              {floats.data(), rewards.data(), terminated.data(), truncated.data(), final_obs.data()});
    CHECK(floats[0] == -2.0f);
  }
  SECTION("MultiDiscrete with a 2x2 nvec and starts: an int64 array of nvec's shape") {
    const rlx::EnvSpec& spec = space_env("MultiDiscreteEcho");
    CHECK(spec.action_space == Space::multi_discrete({2, 3, 4, 5}, {0, 1, -1, 10}, {2, 2}));
    rlx::VectorEnv envs(rlx::global_env_registry().factory(spec.id), 1);
    std::vector<float> floats(4), rewards(1), final_obs(4);
    std::vector<uint8_t> terminated(1), truncated(1);
    envs.reset(0, floats.data());
    const std::vector<int64_t> indices = {1, 2, 3, 4};
    envs.step(rlx::ActionBatch{indices.data(), nullptr},
              {floats.data(), rewards.data(), terminated.data(), truncated.data(), final_obs.data()});
    CHECK(floats == std::vector<float>{1, 3, 2, 14});
  }
  SECTION("MultiBinary((2, 2)): an int64 array of its shape") {
    const rlx::EnvSpec& spec = space_env("MultiBinaryEcho");
    CHECK(spec.action_space == Space::multi_binary({2, 2}));
    auto env = rlx::global_env_registry().make(spec.id);
    Observation obs(*env);
    env->reset(0, obs.row());
    const std::vector<int64_t> bits = {1, 0, 0, 1};
    rlx::Action action;
    action.indices = bits.data();
    env->step(action, obs.row());
    CHECK(obs.floats == std::vector<float>{1, 0, 0, 1});
  }
}

TEST_CASE("RLlib's action_mask key leaves the observation space and becomes the mask of every reset and step",
          "[envs][python]") {
  SECTION("a float Box mask of Discrete actions") {
    const rlx::EnvSpec& spec = space_env("RllibMasked");
    CHECK(spec.action_mask);
    CHECK(spec.observation_space == Space::dict({{"observations", Space::box({3}, -1, 1)}}));  // still a Dict
    auto env = rlx::global_env_registry().make(spec.id);
    CHECK(env->observation_layout().mask_size == 5);
    Observation obs(*env);
    env->reset(0, obs.row());
    CHECK(obs.floats == std::vector<float>(3, 0.5f));
    CHECK(obs.mask(5) == std::vector<uint8_t>{0, 1, 1, 1, 1});
    rlx::Action action;
    action.index = 1;
    env->step(action, obs.row());
    CHECK(obs.mask(5) == std::vector<uint8_t>{1, 0, 1, 1, 1});
  }
  SECTION("a MultiBinary mask of MultiDiscrete actions") {
    const rlx::EnvSpec& spec = space_env("RllibMaskedMultiDiscrete");
    CHECK(spec.action_mask);
    CHECK(spec.observation_space == Space::dict({{"state", Space::tuple({Space::discrete(4), Space::box({1}, -1, 1)})}}));
    auto env = rlx::global_env_registry().make(spec.id);
    Observation obs(*env);
    env->reset(0, obs.row());
    CHECK(obs.bytes == std::vector<uint8_t>{1, 1, 0, 0, 1});
  }
  SECTION("an env with both conventions: the key wins and action_masks() is never called") {
    const rlx::EnvSpec& spec = space_env("BothMasks");
    CHECK(spec.action_mask);
    auto env = rlx::global_env_registry().make(spec.id);
    Observation obs(*env);
    env->reset(0, obs.row());
    CHECK(obs.mask(5) == std::vector<uint8_t>{0, 1, 1, 1, 1});
  }
}

TEST_CASE("SB3's action_masks() is called after every reset and step and becomes the mask", "[envs][python]") {
  const rlx::EnvSpec& spec = space_env("Sb3Masked");
  CHECK(spec.action_mask);
  CHECK(spec.observation_space == Space::box({2}, -1, 1));
  auto env = rlx::global_env_registry().make(spec.id);
  Observation obs(*env);
  env->reset(0, obs.row());
  CHECK(obs.bytes == std::vector<uint8_t>{1, 1, 1});
  rlx::Action action;
  env->step(action, obs.row());
  CHECK(obs.floats == std::vector<float>{0.1f, 0});
  CHECK(obs.bytes == std::vector<uint8_t>{1, 0, 1});
  env->step(action, obs.row());
  CHECK(obs.bytes == std::vector<uint8_t>{1, 1, 1});
}

TEST_CASE("A mask of the wrong size, or one that allows no action, stops the env by name", "[envs][python]") {
  CHECK(output_error("RllibMaskShort", 3) ==
        "python:space_envs:RllibMaskShort: step (episode step 2): observation['action_mask'] has shape (4,), expected shape "
        "(5,) (observation_space['action_mask'] Box(0, 1, (5,), float32))");
  CHECK(output_error("RllibMaskEmpty", 3) == "python:space_envs:RllibMaskEmpty: step (episode step 2): action_mask allows no action");
  CHECK(output_error("Sb3MaskShort", 3) ==
        "python:space_envs:Sb3MaskShort: step (episode step 2): action_masks() has shape (2,), expected 3 elements, one per "
        "action of Discrete(3)");
  CHECK(output_error("Sb3MaskEmpty", 3) == "python:space_envs:Sb3MaskEmpty: step (episode step 2): action_mask allows no action");
}

TEST_CASE("Spaces rlx cannot read are refused at the start, named by their path inside the observation", "[envs][python]") {
  const std::string readable = ", which rlx cannot read (it reads Box, Discrete, MultiDiscrete, MultiBinary, Tuple, Dict)";
  CHECK(refusal("TextInDict") ==
        "python:space_envs:TextInDict: observation_space['sensors']['caption'] is Text(1, 10, charset=abc)" + readable);
  CHECK(refusal("GraphInTuple") == "python:space_envs:GraphInTuple: observation_space[1] is Graph(Box(-1.0, 1.0, (2,), float32), "
                                   "Discrete(3, start=0))" + readable);
  CHECK(refusal("SequenceInDict") ==
        "python:space_envs:SequenceInDict: observation_space['events'] is Sequence(Discrete(2, start=0), stack=False)" + readable);
  CHECK(refusal("OneOfInTuple") == "python:space_envs:OneOfInTuple: observation_space[1] is OneOf(Discrete(2, start=0), "
                                   "Box(-1.0, 1.0, (1,), float32))" + readable);  // not read as a Tuple, for all its `spaces`
  CHECK_THAT(refusal("UnknownSpace"),
             Catch::StartsWith("python:space_envs:UnknownSpace: observation_space is a Weird (<space_envs.Weird object") &&
                 Catch::EndsWith(readable));
  CHECK(refusal("ComplexBox") == "python:space_envs:ComplexBox: observation_space is a Box of complex64, which rlx cannot read "
                                 "(it reads Boxes of float, integer and bool dtypes)");
}

TEST_CASE("Action spaces rlx cannot act in and misplaced masks are refused, naming the env", "[envs][python]") {
  CHECK(refusal("DictActions") == "environment 'python:space_envs:DictActions': action_space Dict('a': Discrete(2)) is not "
                                  "supported: rlx acts in Box (float32), Discrete, MultiDiscrete and MultiBinary spaces");
  CHECK(refusal("IntBoxActions") == "python:space_envs:IntBoxActions: action_space is a Box of int64; rlx acts in Boxes of "
                                    "float32 or float64 (continuous actions), Discrete, MultiDiscrete and MultiBinary");
  CHECK(refusal("MaskWithBoxActions") ==
        "python:space_envs:MaskWithBoxActions: observation_space['action_mask'] is an action mask (RLlib's convention), and "
        "rlx masks Discrete and MultiDiscrete actions, not Box(-1, 1, (2,), float32) (rename the key if it holds no mask)");
  CHECK(refusal("MaskWrongSize") ==
        "python:space_envs:MaskWrongSize: observation_space['action_mask'] is Box(0, 1, (4,), float32), expected an action "
        "mask: a Box or MultiBinary of 5 elements, one per action of Discrete(5)");
  CHECK_THAT(refusal("MaskOnly"), Catch::StartsWith("python:space_envs:MaskOnly: observation_space Dict('action_mask': "
                                                    "MultiBinary(2)) holds nothing but the action mask"));
  CHECK(refusal("Sb3MaskMultiBinary") == "python:space_envs:Sb3MaskMultiBinary: the env has action_masks() (sb3-contrib's "
                                         "convention), and rlx masks Discrete and MultiDiscrete actions, not MultiBinary(3)");
}

TEST_CASE("A wrong observation is named by its path inside the observation", "[envs][python]") {
  const std::string at = ": step (episode step 1): ";
  CHECK(output_error("WrongLeafShape", 1) == "python:space_envs:WrongLeafShape" + at +
                                                 "observation['pos'] has shape (3,), expected shape (2,) "
                                                 "(observation_space['pos'] Box(-1, 1, (2,), float32))");
  CHECK_THAT(output_error("MissingKey", 1),
             Catch::StartsWith("python:space_envs:MissingKey" + at + "observation has no key 'level' (it has ['pos', 'pair']) "
                               "(observation_space Dict('level': Discrete(3, start=1), 'pair': "));
  CHECK(output_error("LongTuple", 1) == "python:space_envs:LongTuple" + at +
                                            "observation['pair'] is a tuple of 3, expected 2 (observation_space['pair'] "
                                            "Tuple(Discrete(2), Box(0, 255, (2,), uint8)))");
  CHECK(output_error("NotAByte", 1) == "python:space_envs:NotAByte" + at +
                                           "observation['pair'][1] has element 0 = 300, not a byte (an integer in [0, 255]) "
                                           "(observation_space['pair'][1] Box(0, 255, (2,), uint8))");
  CHECK_THAT(output_error("NotADict", 1),
             Catch::StartsWith("python:space_envs:NotADict" + at + "observation is a list ([0.0, 0.0]), expected a dict "
                               "(observation_space Dict("));
  CHECK_THAT(output_error("DiscreteOutOfRange", 1),
             Catch::StartsWith("python:space_envs:DiscreteOutOfRange" + at +
                               "observation['level'][0] is 7.000000, not a value of Discrete(3, start=1)"));
}
