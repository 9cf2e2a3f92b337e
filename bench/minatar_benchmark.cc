#include "bench/minatar_benchmark.h"

#include <chrono>
#include <memory>
#include <vector>

#include "envs/minatar/minatar_env.h"

namespace rlx {
namespace {

// Steps between clock reads: small against a second, large against a clock read.
constexpr int64_t kStepsPerCheck = 1 << 16;

// Runs `chunk` (kStepsPerCheck steps a call) until `seconds` have passed; steps per second.
template <typename Chunk>
double steps_per_s(double seconds, Chunk&& chunk) {
  const auto start = std::chrono::steady_clock::now();
  int64_t steps = 0;
  double elapsed = 0.0;
  do {
    chunk();
    steps += kStepsPerCheck;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < seconds);
  return static_cast<double>(steps) / elapsed;
}

}  // namespace

std::optional<double> measure_minatar_game_steps_per_s(const Env& env, double seconds, uint64_t seed) {
  const auto* minatar = dynamic_cast<const MinAtarEnv*>(&env);
  if (!minatar) return std::nullopt;
  const std::unique_ptr<MinAtarGame> game = make_minatar_game(minatar->game().name(), minatar->game().options());
  const std::vector<int>& action_set = minatar->action_set();
  const auto actions = static_cast<int64_t>(action_set.size());
  std::vector<uint8_t> obs(static_cast<size_t>(game->observation_size()));
  Rng rng(seed);
  game->reset(rng);
  game->write_observation(obs.data());
  return steps_per_s(seconds, [&] {
    for (int64_t t = 0; t < kStepsPerCheck; ++t) {
      const StepOutcome outcome = game->step(action_set[static_cast<size_t>(rng.uniform_int(actions))], rng);
      if (outcome.terminal) game->reset(rng);
      game->write_observation(obs.data());
    }
  });
}

std::optional<double> measure_minatar_env_api_steps_per_s(Env& env, double seconds, uint64_t seed) {
  if (!dynamic_cast<const MinAtarEnv*>(&env)) return std::nullopt;
  const ObservationLayout& layout = env.observation_layout();
  std::vector<float> floats(static_cast<size_t>(layout.float_slots));
  std::vector<uint8_t> bytes(static_cast<size_t>(layout.byte_slots));
  const ObsRow row(floats.data(), bytes.data());
  const int64_t actions = env.spec().action_space.n;
  Rng rng(seed ^ 0xacc1005eedULL);
  env.reset(seed, row);
  return steps_per_s(seconds, [&] {
    Action action;
    for (int64_t t = 0; t < kStepsPerCheck; ++t) {
      action.index = rng.uniform_int(actions);
      const StepResult result = env.step(action, row);
      if (result.terminated || result.truncated) env.reset(std::nullopt, row);
    }
  });
}

}  // namespace rlx
