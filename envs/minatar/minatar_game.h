// MinAtar (Young & Tian 2019, arXiv:1903.03176): five Atari-like games on a 10x10 grid of
// boolean channels. This folder holds their game logic only, written from the paper and the rules
// of the reference implementation (github.com/kenjyoung/MinAtar); it does not know rlx's Env API,
// an adapter turns a MinAtarGame into an Env. docs/minatar.md states every rule.
//
// A game's whole dynamic state lives in small fixed arrays: a step allocates nothing, and
// write_observation is a memset plus a few stores. All randomness comes from the caller's Rng.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/rgb_image.h"
#include "core/rng.h"

namespace rlx {

// How a game is played beyond its rules; the reference's defaults.
struct MinAtarOptions {
  double sticky_action_prob = 0.1;  // in [0, 1]: the chance that a step repeats the previous action
  bool difficulty_ramping = true;   // Asterix, Seaquest and SpaceInvaders speed up as play goes on
};

// What one step returns besides the new state.
struct StepOutcome {
  float reward = 0.0f;
  bool terminal = false;  // the episode has ended; the next call should be reset()
};

class MinAtarStateWriter;
class MinAtarStateReader;

// One MinAtar game: its state, its rules (step), its observation [10, 10, channels()] and its
// exact snapshot. Games are not thread-safe; use one per thread.
class MinAtarGame {
 public:
  static constexpr int kGridSize = 10;
  // The full action set, numbered as the reference numbers it; every game accepts all six.
  enum Action : int { kNoop = 0, kLeft = 1, kUp = 2, kRight = 3, kDown = 4, kFire = 5 };
  static constexpr int kNumActions = 6;
  // render() draws each grid cell as a square of this many pixels: a 160x160 image.
  static constexpr int kRenderCellPixels = 16;
  static constexpr int kRenderSize = kGridSize * kRenderCellPixels;

  virtual ~MinAtarGame() = default;
  MinAtarGame(const MinAtarGame&) = delete;
  MinAtarGame& operator=(const MinAtarGame&) = delete;

  // The name make_minatar_game knows the game by, e.g. "space_invaders".
  virtual std::string name() const = 0;
  // Number of observation channels C (Breakout 4, Asterix 4, Freeway 7, Seaquest 10,
  // SpaceInvaders 6).
  virtual int channels() const = 0;
  // The channels' names in observation order (channels() of them), as the reference names them.
  virtual std::vector<std::string> channel_names() const = 0;
  // The actions that change this game, as full-set indices in the reference's order. The
  // Gymnasium ids MinAtar/<Game>-v1 act over this set, MinAtar/<Game>-v0 over all six actions
  // (minatar/gym.py registers v0 with use_minimal_action_set=False, v1 with True).
  virtual std::vector<int> minimal_action_set() const = 0;
  // Names of the six full-set actions by index: noop, left, up, right, down, fire.
  static const std::vector<std::string>& action_names();
  // The options the game was made with.
  const MinAtarOptions& options() const { return options_; }
  // Elements of one observation: 10 * 10 * channels().
  int observation_size() const { return kGridSize * kGridSize * channels(); }

  // Starts an episode from the game's start state (drawing its random parts from rng). The
  // previous action, which sticky actions repeat, carries over from the last episode, as in the
  // reference.
  void reset(Rng& rng);
  // Plays one frame: with probability sticky_action_prob the previous action replaces
  // full_action (one rng.uniform() draw every step, whatever the probability, as the reference
  // draws), then the game moves. Throws std::invalid_argument unless 0 <= full_action < 6 and std::logic_error
  // before the first reset(); after a terminal step it returns {0, true} and changes nothing.
  StepOutcome step(int full_action, Rng& rng);
  // Whether the episode has ended.
  bool terminal() const { return terminal_; }
  // The action the last step actually played (after stickiness); kNoop before any step.
  int last_action() const { return last_action_; }
  // How far difficulty ramping has gone (the reference's ramp index); 0 for games without it.
  virtual int difficulty_level() const { return 0; }

  // Writes the state as a [10, 10, C] array in HWC order: the cell at row y (0 at the top),
  // column x, channel c is out[(y * 10 + x) * C + c], 0 or 1. out holds observation_size() bytes.
  virtual void write_observation(uint8_t* out) const = 0;
  // The game's whole dynamic state (the Rng is the caller's): restore_exact_state of it makes
  // the game continue exactly as this one would.
  std::vector<double> exact_state() const;
  // Overwrites the state with one exact_state() returned (of a game of the same kind). Throws
  // std::invalid_argument, naming the element and its allowed range, on a wrong size or an
  // impossible value, leaving the game unchanged.
  void restore_exact_state(const std::vector<double>& state);
  // Draws the grid into image (made kRenderSize x kRenderSize): each cell a square coloured by
  // the highest-numbered channel set there (a cubehelix palette, like the reference's display),
  // black where none is.
  void render(RgbImage& image) const;

 protected:
  // Throws std::invalid_argument unless options.sticky_action_prob is in [0, 1].
  explicit MinAtarGame(MinAtarOptions options);

  // reset()'s hook: puts the game in its start state.
  virtual void reset_game(Rng& rng) = 0;
  // step()'s hook: plays action (a full-set index, stickiness already applied) on a live game.
  virtual StepOutcome step_game(int action, Rng& rng) = 0;
  // exact_state()'s hook: appends the game's own fields.
  virtual void save_game(MinAtarStateWriter& out) const = 0;
  // restore_exact_state()'s hook: reads the fields save_game wrote, validating each, and only
  // then overwrites the game's state (an exception leaves it unchanged).
  virtual void load_game(MinAtarStateReader& in) = 0;

  bool ramping() const { return options_.difficulty_ramping; }

 private:
  MinAtarOptions options_;
  int last_action_ = kNoop;
  bool terminal_ = false;
  bool started_ = false;  // reset() or restore_exact_state() has run
};

// Appends a game's fields to an exact state, one double each.
class MinAtarStateWriter {
 public:
  explicit MinAtarStateWriter(std::vector<double>& out) : out_(out) {}
  // Appends one integer (or boolean, as 0 or 1) field.
  void put(int value) { out_.push_back(value); }

 private:
  std::vector<double>& out_;
};

// Reads a game's fields back from an exact state, each checked against its range.
class MinAtarStateReader {
 public:
  // Reads state from element `start` on; game names the game in error messages.
  MinAtarStateReader(const std::vector<double>& state, size_t start, std::string game)
      : state_(state), next_(start), game_(std::move(game)) {}
  // The next field, an integer in [low, high]; throws std::invalid_argument naming the field,
  // its index and the range otherwise.
  int take(const char* field, int low, int high);
  // The next field as a boolean (0 or 1).
  bool take_bool(const char* field) { return take(field, 0, 1) == 1; }
  // Throws std::invalid_argument for a value that breaks a rule across fields (message says which).
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const std::vector<double>& state_;
  size_t next_;
  std::string game_;
};

// A small list of at most N elements in fixed storage, keeping insertion order (the reference
// keeps its moving objects in Python lists and walks them newest first).
template <typename T, int N>
class FixedList {
 public:
  using value_type = T;
  static constexpr int kCapacity = N;
  int size() const { return size_; }
  T& operator[](int i) { return items_[i]; }
  const T& operator[](int i) const { return items_[i]; }
  // Appends item; throws std::logic_error when full (the games' bounds make that unreachable).
  void push(const T& item) {
    if (size_ == N) throw_full();
    items_[size_++] = item;
  }
  // Removes element i, keeping the others' order.
  void erase(int i) {
    for (int j = i + 1; j < size_; ++j) items_[j - 1] = items_[j];
    --size_;
  }
  void clear() { size_ = 0; }

 private:
  [[noreturn]] static void throw_full();

  T items_[N] = {};
  int size_ = 0;
};

// The games make_minatar_game knows: breakout, asterix, freeway, seaquest, space_invaders.
std::vector<std::string> minatar_game_names();
// A new game by name; throws std::invalid_argument naming the known games for any other name
// (or for bad options).
std::unique_ptr<MinAtarGame> make_minatar_game(const std::string& name, MinAtarOptions options = {});

// ---- implementation of the templates above ----

template <typename T, int N>
void FixedList<T, N>::throw_full() {
  throw std::logic_error("MinAtar: more than " + std::to_string(N) + " moving objects of one kind");
}

}  // namespace rlx
