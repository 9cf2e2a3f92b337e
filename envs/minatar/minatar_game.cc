#include "envs/minatar/minatar_game.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "core/did_you_mean.h"
#include "envs/minatar/asterix.h"
#include "envs/minatar/breakout.h"
#include "envs/minatar/freeway.h"
#include "envs/minatar/seaquest.h"
#include "envs/minatar/space_invaders.h"

namespace rlx {
namespace {

constexpr int kMaxChannels = 10;  // Seaquest's
constexpr double kPi = 3.141592653589793;

// Fields of the base's part of an exact state, before the game's own.
constexpr size_t kBaseStateFields = 2;  // last action, terminal

// Matplotlib's "cubehelix" colour map (Green 2011; gamma 1, start 0.5, rotations -1.5, hue 1) at
// x in [0, 1], as seaborn's color_palette("cubehelix", n) samples it for the reference's display.
std::array<uint8_t, 3> cubehelix(double x) {
  const double amplitude = x * (1.0 - x) / 2.0;
  const double phi = 2.0 * kPi * (0.5 / 3.0 + -1.5 * x);
  const double c = std::cos(phi);
  const double s = std::sin(phi);
  const double rgb[3] = {x + amplitude * (-0.14861 * c + 1.78277 * s), x + amplitude * (-0.29227 * c - 0.90649 * s),
                         x + amplitude * (1.97294 * c)};
  std::array<uint8_t, 3> out{};
  for (int i = 0; i < 3; ++i) out[i] = static_cast<uint8_t>(std::lround(255.0 * std::clamp(rgb[i], 0.0, 1.0)));
  return out;
}

struct GameEntry {
  const char* name;
  std::function<std::unique_ptr<MinAtarGame>(MinAtarOptions)> make;
};

const std::vector<GameEntry>& game_table() {
  static const std::vector<GameEntry> table = {
      {"breakout", [](MinAtarOptions o) { return std::make_unique<Breakout>(o); }},
      {"asterix", [](MinAtarOptions o) { return std::make_unique<Asterix>(o); }},
      {"freeway", [](MinAtarOptions o) { return std::make_unique<Freeway>(o); }},
      {"seaquest", [](MinAtarOptions o) { return std::make_unique<Seaquest>(o); }},
      {"space_invaders", [](MinAtarOptions o) { return std::make_unique<SpaceInvaders>(o); }},
  };
  return table;
}

}  // namespace

MinAtarGame::MinAtarGame(MinAtarOptions options) : options_(options) {
  if (!(options_.sticky_action_prob >= 0.0 && options_.sticky_action_prob <= 1.0)) {
    throw std::invalid_argument("MinAtar: sticky_action_prob is " + std::to_string(options_.sticky_action_prob) +
                                "; expected a probability in [0, 1]");
  }
}

const std::vector<std::string>& MinAtarGame::action_names() {
  static const std::vector<std::string> names = {"noop", "left", "up", "right", "down", "fire"};
  return names;
}

void MinAtarGame::reset(Rng& rng) {
  reset_game(rng);
  terminal_ = false;
  started_ = true;
}

StepOutcome MinAtarGame::step(int full_action, Rng& rng) {
  if (full_action < 0 || full_action >= kNumActions) {
    throw std::invalid_argument("MinAtar " + name() + ": action " + std::to_string(full_action) +
                                " is outside the full action set [0, 5]");
  }
  if (!started_) throw std::logic_error("MinAtar " + name() + ": step() before the first reset()");
  if (terminal_) return {0.0f, true};
  if (rng.uniform() < options_.sticky_action_prob) full_action = last_action_;  // drawn even at 0, as the reference
  last_action_ = full_action;
  const StepOutcome outcome = step_game(full_action, rng);
  terminal_ = outcome.terminal;
  return outcome;
}

std::vector<double> MinAtarGame::exact_state() const {
  std::vector<double> state;
  MinAtarStateWriter out(state);
  out.put(last_action_);
  out.put(terminal_);
  save_game(out);
  return state;
}

void MinAtarGame::restore_exact_state(const std::vector<double>& state) {
  const size_t expected = exact_state().size();
  if (state.size() != expected) {
    throw std::invalid_argument("MinAtar " + name() + ": exact state has " + std::to_string(state.size()) +
                                " elements; expected " + std::to_string(expected));
  }
  MinAtarStateReader base(state, 0, name());
  const int last_action = base.take("last_action", 0, kNumActions - 1);
  const bool terminal = base.take_bool("terminal");
  MinAtarStateReader in(state, kBaseStateFields, name());
  load_game(in);  // validates everything before it changes the game
  last_action_ = last_action;
  terminal_ = terminal;
  started_ = true;
}

void MinAtarGame::render(RgbImage& image) const {
  if (image.width != kRenderSize || image.height != kRenderSize) image = RgbImage(kRenderSize, kRenderSize);
  const int c_count = channels();
  std::array<std::array<uint8_t, 3>, kMaxChannels + 1> palette{};  // [0]: black, [c + 1]: channel c
  for (int c = 0; c < c_count; ++c) palette[c + 1] = cubehelix(static_cast<double>(c + 1) / (c_count + 1));
  uint8_t observation[kGridSize * kGridSize * kMaxChannels];
  write_observation(observation);
  for (int y = 0; y < kGridSize; ++y) {
    for (int x = 0; x < kGridSize; ++x) {
      int colour = 0;
      for (int c = 0; c < c_count; ++c) {
        if (observation[(y * kGridSize + x) * c_count + c]) colour = c + 1;
      }
      for (int py = 0; py < kRenderCellPixels; ++py) {
        uint8_t* row = image.pixel(x * kRenderCellPixels, y * kRenderCellPixels + py);
        for (int px = 0; px < kRenderCellPixels; ++px) std::copy_n(palette[colour].data(), 3, row + 3 * px);
      }
    }
  }
}

int MinAtarStateReader::take(const char* field, int low, int high) {
  if (next_ >= state_.size()) fail(std::string("exact state ends before ") + field);
  const double value = state_[next_];
  if (!(value >= low && value <= high && value == std::floor(value))) {
    fail("exact state[" + std::to_string(next_) + "] (" + field + ") is " + std::to_string(value) +
         "; expected an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  ++next_;
  return static_cast<int>(value);
}

void MinAtarStateReader::fail(const std::string& message) const {
  throw std::invalid_argument("MinAtar " + game_ + ": " + message);
}

std::vector<std::string> minatar_game_names() {
  std::vector<std::string> names;
  for (const auto& entry : game_table()) names.emplace_back(entry.name);
  return names;
}

std::unique_ptr<MinAtarGame> make_minatar_game(const std::string& name, MinAtarOptions options) {
  for (const auto& entry : game_table()) {
    if (name == entry.name) return entry.make(options);
  }
  const std::vector<std::string> names = minatar_game_names();
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  std::string message = "unknown MinAtar game '" + name + "'";
  if (const auto guess = closest_match(name, names)) message += " (did you mean '" + *guess + "'?)";
  throw std::invalid_argument(message + "; known games: " + known);
}

}  // namespace rlx
