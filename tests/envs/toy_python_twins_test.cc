// The Python twins of the toy envs (examples/python_env/illegal_moves.py and dict_sensors.py) through
// the Python bridge: their specs equal the built-ins' but for the id, and their rules are the
// same (the random draws are NumPy's, so the boards differ).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "envs/python_env.h"
#include "envs/registry.h"
#include "envs/toy/dict_sensors.h"
#include "envs/toy/illegal_moves.h"

namespace {

// The spec of a twin in examples/python_env, registered on first use.
const rlx::EnvSpec& twin(const std::string& id) {
  static const bool path_added = [] {
    rlx::add_python_path({std::string(RLX_SOURCE_DIR) + "/examples/python_env"});
    return true;
  }();
  (void)path_added;
  rlx::register_python_env(id);
  return rlx::global_env_registry().spec(id);
}

// A spec under another id.
rlx::EnvSpec renamed(rlx::EnvSpec spec, const std::string& id) {
  spec.id = id;
  return spec;
}

struct Buffers {
  explicit Buffers(const rlx::Env& env)
      : floats(static_cast<size_t>(env.observation_layout().float_slots)), bytes(static_cast<size_t>(env.observation_layout().byte_slots)) {}
  rlx::ObsRow row() { return rlx::ObsRow(floats.data(), bytes.data()); }
  std::vector<float> floats;
  std::vector<uint8_t> bytes;
};

}  // namespace

TEST_CASE("python:illegal_moves:IllegalMovesEnv has Toy/IllegalMoves-v0's spec, its mask through action_masks()", "[envs][toy][python]") {
  const std::string id = "python:illegal_moves:IllegalMovesEnv";
  const rlx::EnvSpec& spec = twin(id);
  CHECK(spec == renamed(rlx::IllegalMovesEnv::default_spec(), id));
  CHECK(spec.action_mask);
}

TEST_CASE("python:illegal_moves:IllegalMovesEnv pays values, -10 with termination, and 7.8 to the best legal cell", "[envs][toy][python]") {
  const std::string id = "python:illegal_moves:IllegalMovesEnv";
  twin(id);
  std::unique_ptr<rlx::Env> env = rlx::global_env_registry().make(id);
  Buffers b(*env);
  const auto legal = [&](int c) { return b.bytes[static_cast<size_t>(c)] != 0; };  // the mask: the only bytes
  double total = 0.0;
  constexpr int kEpisodes = 400;
  for (int e = 0; e < kEpisodes; ++e) {
    env->reset(e == 0 ? std::optional<uint64_t>(3) : std::nullopt, b.row());
    for (int t = 1;; ++t) {
      int count = 0, best = -1;
      for (int c = 0; c < 9; ++c) {
        count += legal(c);
        if (legal(c) && (best < 0 || b.floats[static_cast<size_t>(c)] > b.floats[static_cast<size_t>(best)])) best = c;
      }
      CHECK(count >= 2);
      CHECK(count <= 6);
      rlx::Action action;
      action.index = best;
      const float value = b.floats[static_cast<size_t>(best)];
      const rlx::StepResult r = env->step(action, b.row());
      CHECK(r.reward == Approx(value));
      total += r.reward;
      CHECK_FALSE(r.terminated);
      if (r.truncated) {
        CHECK(t == 10);
        break;
      }
    }
  }
  CHECK(total / kEpisodes == Approx(7.814).margin(0.12));
  // An illegal cell: -10, terminated.
  env->reset(4, b.row());
  int illegal = 0;
  while (legal(illegal)) ++illegal;
  rlx::Action action;
  action.index = illegal;
  const rlx::StepResult r = env->step(action, b.row());
  CHECK(r.reward == -10.0);
  CHECK(r.terminated);
}

TEST_CASE("python:dict_sensors:DictSensorsEnv has Toy/DictSensors-v0's spec and pays 16 for reading every key", "[envs][toy][python]") {
  const std::string id = "python:dict_sensors:DictSensorsEnv";
  const rlx::EnvSpec& spec = twin(id);
  CHECK(spec == renamed(rlx::DictSensorsEnv::default_spec(), id));
  std::unique_ptr<rlx::Env> env = rlx::global_env_registry().make(id);
  Buffers b(*env);
  for (int e = 0; e < 20; ++e) {
    env->reset(e == 0 ? std::optional<uint64_t>(5) : std::nullopt, b.row());
    double optimal = 0.0;
    for (int t = 1;; ++t) {
      int lit = -1;
      for (int r = 0; r < 3; ++r) {
        if (b.bytes[static_cast<size_t>(3 * r)] && b.bytes[static_cast<size_t>(3 * r + 1)] && b.bytes[static_cast<size_t>(3 * r + 2)]) lit = r;
      }
      REQUIRE(lit >= 0);
      const int positive = (b.floats[1] > 0.0f) + (b.floats[2] > 0.0f);
      const int64_t indices[2] = {static_cast<int64_t>(b.floats[0]), (lit + positive) % 3};
      rlx::Action action;
      action.indices = indices;
      const rlx::StepResult r = env->step(action, b.row());
      optimal += r.reward;
      CHECK_FALSE(r.terminated);
      if (r.truncated) {
        CHECK(t == 8);
        break;
      }
    }
    CHECK(optimal == 16.0);
  }
}
