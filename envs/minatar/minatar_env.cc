#include "envs/minatar/minatar_env.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

namespace rlx {
namespace {

std::vector<int> action_set_of(const MinAtarGame& game, MinAtarActions actions) {
  if (actions == MinAtarActions::kMinimal) return game.minimal_action_set();
  std::vector<int> full(MinAtarGame::kNumActions);
  for (int a = 0; a < MinAtarGame::kNumActions; ++a) full[static_cast<size_t>(a)] = a;
  return full;
}

// Python's str.title() then the underscores dropped, as minatar/gym.py names its ids:
// "space_invaders" -> "SpaceInvaders".
std::string title_case(const std::string& game) {
  std::string out;
  bool word_start = true;
  for (const char c : game) {
    const bool letter = std::isalpha(static_cast<unsigned char>(c)) != 0;
    if (letter) out += static_cast<char>(word_start ? std::toupper(static_cast<unsigned char>(c)) : c);
    if (c != '_' && !letter) out += c;
    word_start = !letter;
  }
  return out;
}

}  // namespace

MinAtarEnv::MinAtarEnv(const std::string& game, MinAtarActions actions, MinAtarOptions options, int max_episode_steps)
    : MinAtarEnv(make_minatar_game(game, options), actions, max_episode_steps) {}

MinAtarEnv::MinAtarEnv(std::unique_ptr<MinAtarGame> game, MinAtarActions actions, int max_episode_steps)
    : Env(spec_for(*game, actions, max_episode_steps)), game_(std::move(game)), action_set_(action_set_of(*game_, actions)) {}

EnvSpec MinAtarEnv::spec_for(const MinAtarGame& game, MinAtarActions actions, int max_episode_steps) {
  EnvSpec spec;
  spec.id = minatar_env_id(game.name(), actions);
  spec.observation_space =
      Space::box({MinAtarGame::kGridSize, MinAtarGame::kGridSize, game.channels()}, 0, 1, ScalarType::kUint8);
  spec.action_space = Space::discrete(static_cast<int64_t>(action_set_of(game, actions).size()));
  spec.max_episode_steps = max_episode_steps;
  return spec;
}

void MinAtarEnv::reset_episode(Rng& rng, ObsSpan obs) {
  game_->reset(rng);
  game_->write_observation(obs.bytes().data());
}

StepResult MinAtarEnv::step_episode(const Action& action, ObsSpan obs) {
  const auto count = static_cast<int64_t>(action_set_.size());
  if (action.index < 0 || action.index >= count) {
    throw std::invalid_argument(spec().id + " action must be in [0, " + std::to_string(count - 1) + "], got " +
                                std::to_string(action.index));
  }
  const StepOutcome outcome = game_->step(action_set_[static_cast<size_t>(action.index)], rng());
  game_->write_observation(obs.bytes().data());
  return {static_cast<double>(outcome.reward), outcome.terminal, false};
}

std::vector<double> MinAtarEnv::exact_state() const { return game_->exact_state(); }

void MinAtarEnv::restore_exact_state(const std::vector<double>& state) { game_->restore_exact_state(state); }

std::optional<RgbImage> MinAtarEnv::render_image() const {
  RgbImage image;
  game_->render(image);
  return image;
}

std::string minatar_env_id(const std::string& game, MinAtarActions actions) {
  const std::vector<std::string> games = minatar_game_names();
  if (std::find(games.begin(), games.end(), game) == games.end()) {
    make_minatar_game(game);  // throws the error naming the known games
  }
  return "MinAtar/" + title_case(game) + (actions == MinAtarActions::kMinimal ? "-v1" : "-v0");
}

void register_minatar_envs(EnvRegistrar& registrar) {
  for (const std::string& name : minatar_game_names()) {
    const std::unique_ptr<MinAtarGame> game = make_minatar_game(name);
    for (const MinAtarActions actions : {MinAtarActions::kFull, MinAtarActions::kMinimal}) {
      registrar.add(MinAtarEnv::spec_for(*game, actions), [name, actions] { return std::make_unique<MinAtarEnv>(name, actions); });
    }
  }
}

}  // namespace rlx
