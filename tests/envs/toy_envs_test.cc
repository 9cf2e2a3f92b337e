// The toy envs (envs/toy/): Toy/IllegalMoves-v0's mask, penalty and bait, Toy/DictSensors-v0's
// Dict observation where every key matters, and Toy/PixelQuadrants-v0's image and mirror bit. Policies read the observation as a learner would
// (its floats, its bytes, its mask), never the env's state.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "envs/toy/dict_sensors.h"
#include "envs/toy/illegal_moves.h"
#include "envs/toy/pixel_quadrants.h"

namespace {

// One env of the global registry with buffers for its observation.
struct Stepper {
  explicit Stepper(const std::string& id) : env(rlx::global_env_registry().make(id)) {
    floats.resize(static_cast<size_t>(env->observation_layout().float_slots));
    bytes.resize(static_cast<size_t>(env->observation_layout().byte_slots));
  }
  rlx::ObsRow row() { return rlx::ObsRow(floats.data(), bytes.data()); }
  void reset(std::optional<uint64_t> seed) { env->reset(seed, row()); }
  rlx::StepResult step(int64_t index) {
    rlx::Action action;
    action.index = index;
    return env->step(action, row());
  }
  rlx::StepResult step(std::vector<int64_t> indices) {
    rlx::Action action;
    action.indices = indices.data();
    return env->step(action, row());
  }
  // The mask (IllegalMoves: the last 9 bytes).
  bool legal(int cell) const { return bytes[static_cast<size_t>(env->observation_layout().mask_offset + cell)] != 0; }

  std::unique_ptr<rlx::Env> env;
  std::vector<float> floats;
  std::vector<uint8_t> bytes;
};

constexpr int kCells = rlx::IllegalMovesEnv::kCells;

// A policy of IllegalMoves: the cell to take, given the stepper's observation and a generator.
using MovePolicy = std::function<int(const Stepper&, rlx::Rng&)>;

int best_legal_cell(const Stepper& s, rlx::Rng&) {
  int best = -1;
  for (int c = 0; c < kCells; ++c) {
    if (s.legal(c) && (best < 0 || s.floats[static_cast<size_t>(c)] > s.floats[static_cast<size_t>(best)])) best = c;
  }
  return best;
}

int random_legal_cell(const Stepper& s, rlx::Rng& rng) {
  std::vector<int> legal;
  for (int c = 0; c < kCells; ++c) {
    if (s.legal(c)) legal.push_back(c);
  }
  return legal[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(legal.size())))];
}

// What a policy that ignores the mask and chases value does.
int highest_value_cell(const Stepper& s, rlx::Rng&) {
  return static_cast<int>(std::max_element(s.floats.begin(), s.floats.end()) - s.floats.begin());
}

// The mean return of `episodes` episodes of a policy, from seed 1.
double mean_return(const std::string& id, int episodes, const std::function<rlx::StepResult(Stepper&, rlx::Rng&)>& act) {
  Stepper s(id);
  rlx::Rng rng(99);
  double total = 0.0;
  for (int e = 0; e < episodes; ++e) {
    s.reset(e == 0 ? std::optional<uint64_t>(1) : std::nullopt);
    for (;;) {
      const rlx::StepResult r = act(s, rng);
      total += r.reward;
      if (r.terminated || r.truncated) break;
    }
  }
  return total / episodes;
}

double mean_move_return(const MovePolicy& policy, int episodes = 4000) {
  return mean_return(rlx::IllegalMovesEnv::kId, episodes, [&](Stepper& s, rlx::Rng& rng) { return s.step(policy(s, rng)); });
}

}  // namespace

TEST_CASE("Toy/IllegalMoves-v0 is a masked Discrete(9) over 9 float values, 10 steps", "[envs][toy]") {
  const rlx::EnvSpec& spec = rlx::global_env_registry().spec("Toy/IllegalMoves-v0");
  CHECK(spec.observation_space == rlx::Space::box({9}, 0.0f, 1.0f));
  CHECK(spec.action_space == rlx::Space::discrete(9));
  CHECK(spec.action_mask);
  CHECK(spec.max_episode_steps == 10);
  Stepper s(spec.id);
  CHECK(s.env->observation_layout().float_slots == 9);
  CHECK(s.env->observation_layout().byte_slots == 9);  // the mask only
}

TEST_CASE("Toy/IllegalMoves-v0 deals the same boards under the same seed", "[envs][toy]") {
  const auto trace = [](uint64_t seed) {
    Stepper s(rlx::IllegalMovesEnv::kId);
    rlx::Rng rng(5);
    std::vector<float> out;
    s.reset(seed);
    for (int t = 0; t < 30; ++t) {
      out.insert(out.end(), s.floats.begin(), s.floats.end());
      out.insert(out.end(), s.bytes.begin(), s.bytes.end());
      const rlx::StepResult r = s.step(random_legal_cell(s, rng));
      out.push_back(static_cast<float>(r.reward));
      if (r.truncated) s.reset(std::nullopt);
    }
    return out;
  };
  CHECK(trace(3) == trace(3));
  CHECK(trace(3) != trace(4));
}

TEST_CASE("Toy/IllegalMoves-v0 pays a legal cell's value and -10 with termination for an illegal one", "[envs][toy]") {
  Stepper s(rlx::IllegalMovesEnv::kId);
  s.reset(11);
  int legal = -1, illegal = -1;
  for (int c = 0; c < kCells; ++c) (s.legal(c) ? legal : illegal) = c;
  REQUIRE(legal >= 0);
  REQUIRE(illegal >= 0);
  const float value = s.floats[static_cast<size_t>(legal)];
  const rlx::StepResult good = s.step(legal);
  CHECK(good.reward == Approx(value));
  CHECK_FALSE(good.terminated);
  CHECK_FALSE(good.truncated);
  for (int c = 0; c < kCells; ++c) {
    if (!s.legal(c)) illegal = c;
  }
  const std::vector<float> board = s.floats;
  const rlx::StepResult bad = s.step(illegal);
  CHECK(bad.reward == -10.0);
  CHECK(bad.terminated);
  CHECK_FALSE(bad.truncated);
  CHECK(s.floats == board);  // an illegal move leaves the board
  CHECK_THROWS_AS(s.step(9), std::invalid_argument);
}

TEST_CASE("Toy/IllegalMoves-v0's mask allows 2 to 6 cells, and legal play is truncated at step 10", "[envs][toy]") {
  Stepper s(rlx::IllegalMovesEnv::kId);
  rlx::Rng rng(2);
  std::vector<int> seen_counts(kCells + 1, 0);
  int bait_on_top = 0, boards = 0;
  for (int episode = 0; episode < 300; ++episode) {
    s.reset(episode == 0 ? std::optional<uint64_t>(0) : std::nullopt);
    for (int t = 1;; ++t) {
      int legal = 0;
      for (int c = 0; c < kCells; ++c) legal += s.legal(c);
      CHECK(legal >= 2);
      CHECK(legal <= 6);
      ++seen_counts[static_cast<size_t>(legal)];
      bait_on_top += !s.legal(highest_value_cell(s, rng));
      ++boards;
      const rlx::StepResult r = s.step(random_legal_cell(s, rng));
      CHECK_FALSE(r.terminated);
      if (r.truncated) {
        CHECK(t == 10);
        break;
      }
    }
  }
  for (int count = 2; count <= 6; ++count) CHECK(seen_counts[static_cast<size_t>(count)] > 0);
  // The highest value on the board is an illegal cell on most boards: the observation tempts.
  CHECK(static_cast<double>(bait_on_top) / boards > 0.6);  // about 0.72
}

TEST_CASE("Toy/IllegalMoves-v0: the best legal cell returns 7.8, a random legal one 5, chasing value without the mask loses", "[envs][toy]") {
  const double optimal = mean_move_return(best_legal_cell);
  const double random = mean_move_return(random_legal_cell);
  const double unmasked = mean_move_return(highest_value_cell);
  // E[max of k uniforms] = k / (k + 1), k uniform in 2..6: 0.7814 a step, 7.814 an episode.
  CHECK(optimal == Approx(7.814).margin(0.05));
  CHECK(random == Approx(5.0).margin(0.1));
  CHECK(unmasked < 0.0);
}

TEST_CASE("Toy/DictSensors-v0 observes goal, grid and position in that order and acts in MultiDiscrete([4 3])", "[envs][toy]") {
  const rlx::EnvSpec& spec = rlx::global_env_registry().spec("Toy/DictSensors-v0");
  CHECK(spec.observation_space.keys == std::vector<std::string>{"goal", "grid", "position"});
  CHECK(spec.action_space == rlx::Space::multi_discrete({4, 3}));
  CHECK_FALSE(spec.action_mask);
  CHECK(spec.max_episode_steps == 8);
  Stepper s(spec.id);
  const rlx::ObservationLayout& layout = s.env->observation_layout();
  CHECK(layout.float_slots == 3);  // goal, then position's 2
  CHECK(layout.byte_slots == 9);   // the grid
  CHECK(layout.flat_size == 4 + 9 + 2);
}

namespace {

// A DictSensors policy: the action from the observation's floats (goal, x, y) and bytes (grid).
using SensorPolicy = std::function<std::vector<int64_t>(const Stepper&, rlx::Rng&)>;

int full_row(const Stepper& s) {
  for (int r = 0; r < 3; ++r) {
    if (s.bytes[static_cast<size_t>(3 * r)] && s.bytes[static_cast<size_t>(3 * r + 1)] && s.bytes[static_cast<size_t>(3 * r + 2)]) return r;
  }
  return -1;
}
int positives(const Stepper& s) { return (s.floats[1] > 0.0f) + (s.floats[2] > 0.0f); }

// Which keys a policy reads; the optimal one reads all three, the others guess the best constant.
std::vector<int64_t> sensor_action(const Stepper& s, bool goal, bool grid, bool position) {
  const int64_t pick = goal ? static_cast<int64_t>(s.floats[0]) : 0;
  const int row = grid ? full_row(s) : 0;
  const int positive = position ? positives(s) : 1;  // 1 positive coordinate is the likeliest
  return {pick, (row + positive) % 3};
}

double mean_sensor_return(const SensorPolicy& policy, int episodes = 3000) {
  return mean_return(rlx::DictSensorsEnv::kId, episodes, [&](Stepper& s, rlx::Rng& rng) { return s.step(policy(s, rng)); });
}

}  // namespace

TEST_CASE("Toy/DictSensors-v0 repeats under a seed, lights exactly one full row and stays in its bounds", "[envs][toy]") {
  const auto trace = [](uint64_t seed) {
    Stepper s(rlx::DictSensorsEnv::kId);
    std::vector<float> out;
    s.reset(seed);
    for (int t = 0; t < 40; ++t) {
      int full = 0;
      for (int r = 0; r < 3; ++r) full += s.bytes[static_cast<size_t>(3 * r)] && s.bytes[static_cast<size_t>(3 * r + 1)] && s.bytes[static_cast<size_t>(3 * r + 2)];
      CHECK(full == 1);
      CHECK(std::abs(s.floats[1]) <= 1.0f);
      CHECK(std::abs(s.floats[2]) <= 1.0f);
      out.insert(out.end(), s.floats.begin(), s.floats.end());
      out.insert(out.end(), s.bytes.begin(), s.bytes.end());
      const rlx::StepResult r = s.step(std::vector<int64_t>{t % 4, t % 3});
      out.push_back(static_cast<float>(r.reward));
      if (r.truncated) s.reset(std::nullopt);
    }
    return out;
  };
  CHECK(trace(8) == trace(8));
  CHECK(trace(8) != trace(9));
}

TEST_CASE("Toy/DictSensors-v0 pays +1 per right element, 16 for reading every key, and is truncated at step 8", "[envs][toy]") {
  Stepper s(rlx::DictSensorsEnv::kId);
  s.reset(4);
  const auto& env = static_cast<const rlx::DictSensorsEnv&>(*s.env);
  const int64_t goal = env.goal(), target = env.target();
  CHECK(s.floats[0] == static_cast<float>(goal));
  CHECK(target == (full_row(s) + positives(s)) % 3);
  CHECK(s.step(std::vector<int64_t>{(goal + 1) % 4, (target + 1) % 3}).reward == 0.0);
  const int64_t goal2 = env.goal(), target2 = env.target();
  CHECK(s.step(std::vector<int64_t>{goal2, (target2 + 1) % 3}).reward == 1.0);
  const int64_t goal3 = env.goal(), target3 = env.target();
  CHECK(s.step(std::vector<int64_t>{(goal3 + 1) % 4, target3}).reward == 1.0);
  CHECK_THROWS_AS(s.step(std::vector<int64_t>{4, 0}), std::invalid_argument);
  CHECK_THROWS_AS(s.step(std::vector<int64_t>{0, 3}), std::invalid_argument);

  s.reset(5);
  double total = 0.0;
  for (int t = 1; t <= 8; ++t) {
    const rlx::StepResult r = s.step(sensor_action(s, true, true, true));
    total += r.reward;
    CHECK_FALSE(r.terminated);
    CHECK(r.truncated == (t == 8));
  }
  CHECK(total == 16.0);
}

TEST_CASE("Toy/DictSensors-v0: a policy that ignores any one key returns less than 16", "[envs][toy]") {
  const auto reads = [](bool goal, bool grid, bool position) {
    return mean_sensor_return([=](const Stepper& s, rlx::Rng&) { return sensor_action(s, goal, grid, position); });
  };
  const double random = mean_sensor_return([](const Stepper&, rlx::Rng& rng) {
    return std::vector<int64_t>{rng.uniform_int(4), rng.uniform_int(3)};
  });
  CHECK(reads(true, true, true) == 16.0);
  CHECK(reads(false, true, true) == Approx(8 * (1 + 0.25)).margin(0.15));      // 10
  CHECK(reads(true, false, true) == Approx(8 * (1 + 1.0 / 3)).margin(0.15));   // 10.67
  CHECK(reads(true, true, false) == Approx(8 * (1 + 0.5)).margin(0.15));       // 12
  CHECK(random == Approx(8 * (0.25 + 1.0 / 3)).margin(0.15));                  // 4.67
}

namespace {

// A PixelQuadrants policy from the observation: the lit pixel's quadrant (if it reads the image),
// mirrored (if it reads the mirror bit); blind to the image it says quadrant 0.
int64_t quadrant_action(const Stepper& s, bool image, bool mirror) {
  int64_t quadrant = 0;
  if (image) {
    const auto lit = std::find(s.bytes.begin(), s.bytes.end(), 1) - s.bytes.begin();
    quadrant = 2 * (lit / 8 >= 4) + (lit % 8 >= 4);
  }
  return mirror && s.floats[0] == 1.0f ? 3 - quadrant : quadrant;
}

}  // namespace

TEST_CASE("Toy/PixelQuadrants-v0 observes an 8x8 image with one lit pixel and a mirror bit, and repeats under a seed",
          "[envs][toy]") {
  const rlx::EnvSpec& spec = rlx::global_env_registry().spec(rlx::PixelQuadrantsEnv::kId);
  CHECK(spec.observation_space.keys == std::vector<std::string>{"image", "mirror"});
  CHECK(spec.action_space == rlx::Space::discrete(4));
  CHECK(spec.max_episode_steps == 8);
  const auto trace = [](uint64_t seed) {
    Stepper s(rlx::PixelQuadrantsEnv::kId);
    CHECK(s.floats.size() == 1);   // the mirror bit
    CHECK(s.bytes.size() == 64);   // the image
    std::vector<float> out;
    s.reset(seed);
    for (int t = 0; t < 40; ++t) {
      CHECK(std::count(s.bytes.begin(), s.bytes.end(), 1) == 1);
      CHECK(std::count(s.bytes.begin(), s.bytes.end(), 0) == 63);
      CHECK((s.floats[0] == 0.0f || s.floats[0] == 1.0f));
      out.insert(out.end(), s.bytes.begin(), s.bytes.end());
      out.push_back(s.floats[0]);
      if (s.step(t % 4).truncated) s.reset(std::nullopt);
    }
    return out;
  };
  CHECK(trace(3) == trace(3));
  CHECK(trace(3) != trace(4));
}

TEST_CASE("Toy/PixelQuadrants-v0 pays 8 for reading both keys, 4 blind to the mirror, 2 blind to the image",
          "[envs][toy]") {
  const auto reads = [](bool image, bool mirror) {
    return mean_return(rlx::PixelQuadrantsEnv::kId, 3000,
                       [=](Stepper& s, rlx::Rng&) { return s.step(quadrant_action(s, image, mirror)); });
  };
  CHECK(reads(true, true) == 8.0);
  CHECK(reads(true, false) == Approx(4.0).margin(0.15));
  CHECK(reads(false, true) == Approx(2.0).margin(0.15));
  Stepper s(rlx::PixelQuadrantsEnv::kId);
  s.reset(1);
  CHECK(static_cast<const rlx::PixelQuadrantsEnv&>(*s.env).target() == quadrant_action(s, true, true));
  CHECK_THROWS_WITH(s.step(4), Catch::Contains("Toy/PixelQuadrants-v0 action must be in Discrete(4), got 4"));
}
