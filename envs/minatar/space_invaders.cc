#include "envs/minatar/space_invaders.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace rlx {
namespace {

constexpr int kLast = MinAtarGame::kGridSize - 1;
constexpr uint16_t kFullRow = (1u << MinAtarGame::kGridSize) - 1;
constexpr uint16_t kWaveRow = 0b0011111100;  // columns 2 to 7
constexpr int kWaveRows = 4;                 // a new wave fills rows 0 to 3
constexpr int kStartMoveInterval = 12;
constexpr int kMinMoveInterval = 6;  // ramping stops speeding waves up here
constexpr int kEnemyShotInterval = 10;
constexpr int kShotCooldown = 5;
constexpr int kStartX = 5;

uint16_t bit(int x) { return static_cast<uint16_t>(1u << x); }

// Set bits of every 10-bit row: a table, since builds without -mpopcnt call libgcc for
// __builtin_popcount, a quarter of a step's time.
constexpr std::array<uint8_t, 1u << MinAtarGame::kGridSize> kRowCounts = [] {
  std::array<uint8_t, 1u << MinAtarGame::kGridSize> counts{};
  for (unsigned row = 1; row < counts.size(); ++row) counts[row] = static_cast<uint8_t>(counts[row >> 1] + (row & 1));
  return counts;
}();

int count(const uint16_t* grid) {
  int n = 0;
  for (int y = 0; y < MinAtarGame::kGridSize; ++y) n += kRowCounts[grid[y]];
  return n;
}

uint16_t columns(const uint16_t* grid) {
  uint16_t any = 0;
  for (int y = 0; y < MinAtarGame::kGridSize; ++y) any |= grid[y];
  return any;
}

}  // namespace

SpaceInvaders::SpaceInvaders(MinAtarOptions options) : MinAtarGame(options) {}

std::vector<std::string> SpaceInvaders::channel_names() const {
  return {"cannon", "alien", "alien_left", "alien_right", "friendly_bullet", "enemy_bullet"};
}

std::vector<int> SpaceInvaders::minimal_action_set() const { return {kNoop, kLeft, kRight, kFire}; }

void SpaceInvaders::reset_game(Rng& /*rng*/) {
  s_ = State();
  s_.cannon_x = kStartX;
  for (int y = 0; y < kWaveRows; ++y) s_.aliens[y] = kWaveRow;
  s_.alien_dir = -1;
  s_.alien_move_interval = s_.alien_move_timer = kStartMoveInterval;
  s_.alien_shot_timer = kEnemyShotInterval;
}

bool SpaceInvaders::march() {
  // At most alien_move_interval frames until the next march, and no more than aliens remain.
  s_.alien_move_timer = std::min(count(s_.aliens), s_.alien_move_interval);
  const uint16_t occupied = columns(s_.aliens);
  const bool at_edge = s_.alien_dir < 0 ? (occupied & bit(0)) != 0 : (occupied & bit(kLast)) != 0;
  if (at_edge) {
    // Turn and step down a row; the bottom row wraps to the top (the episode ends then anyway).
    s_.alien_dir = -s_.alien_dir;
    const uint16_t bottom = s_.aliens[kLast];
    for (int y = kLast; y > 0; --y) s_.aliens[y] = s_.aliens[y - 1];
    s_.aliens[0] = bottom;
    return true;
  }
  for (uint16_t& row : s_.aliens) {
    row = s_.alien_dir < 0 ? static_cast<uint16_t>(row >> 1) : static_cast<uint16_t>((row << 1) & kFullRow);
  }
  return false;
}

void SpaceInvaders::fire_alien_bullet() {
  // The nearest column to the cannon holding an alien (the left one of two equally near) fires
  // from its lowest alien.
  const uint16_t occupied = columns(s_.aliens);
  for (int distance = 0; distance < kGridSize; ++distance) {
    for (const int x : {s_.cannon_x - distance, s_.cannon_x + distance}) {
      if (x < 0 || x > kLast || !(occupied & bit(x))) continue;
      for (int y = kLast; y >= 0; --y) {
        if (s_.aliens[y] & bit(x)) {
          s_.enemy_bullets[y] |= bit(x);
          return;
        }
      }
    }
  }
}

StepOutcome SpaceInvaders::step_game(int action, Rng& /*rng*/) {
  StepOutcome outcome;
  const auto cannon_hit = [this](const uint16_t* grid) { return (grid[kLast] & bit(s_.cannon_x)) != 0; };
  if (action == kFire) {
    if (s_.shot_cooldown == 0) {  // a fire while reloading does nothing
      s_.bullets[kLast] |= bit(s_.cannon_x);
      s_.shot_cooldown = kShotCooldown;
    }
  } else if (action == kLeft) {
    s_.cannon_x = std::max(0, s_.cannon_x - 1);
  } else if (action == kRight) {
    s_.cannon_x = std::min(kLast, s_.cannon_x + 1);
  }
  // The cannon's bullets rise a row (leaving from the top); the aliens' fall a row.
  for (int y = 0; y < kLast; ++y) s_.bullets[y] = s_.bullets[y + 1];
  s_.bullets[kLast] = 0;
  for (int y = kLast; y > 0; --y) s_.enemy_bullets[y] = s_.enemy_bullets[y - 1];
  s_.enemy_bullets[0] = 0;
  if (cannon_hit(s_.enemy_bullets) || cannon_hit(s_.aliens)) outcome.terminal = true;

  if (s_.alien_move_timer == 0) {
    const bool in_bottom_row = s_.aliens[kLast] != 0;
    if (march() && in_bottom_row) outcome.terminal = true;  // stepped down from the bottom row
    if (cannon_hit(s_.aliens)) outcome.terminal = true;
  }
  if (s_.alien_shot_timer == 0) {
    s_.alien_shot_timer = kEnemyShotInterval;
    fire_alien_bullet();
  }
  for (int y = 0; y < kGridSize; ++y) {  // bullets and aliens on one cell destroy each other
    const uint16_t hits = s_.aliens[y] & s_.bullets[y];
    outcome.reward += static_cast<float>(kRowCounts[hits]);
    s_.aliens[y] &= static_cast<uint16_t>(~hits);
    s_.bullets[y] &= static_cast<uint16_t>(~hits);
  }
  if (s_.shot_cooldown > 0) --s_.shot_cooldown;
  --s_.alien_move_timer;
  --s_.alien_shot_timer;
  if (columns(s_.aliens) == 0) {  // a new wave, marching faster when ramping
    if (ramping() && s_.alien_move_interval > kMinMoveInterval) {
      --s_.alien_move_interval;
      ++s_.ramp_level;
    }
    for (int y = 0; y < kWaveRows; ++y) s_.aliens[y] = kWaveRow;
  }
  return outcome;
}

void SpaceInvaders::write_observation(uint8_t* out) const {
  std::memset(out, 0, kGridSize * kGridSize * kChannels);
  out[(kLast * kGridSize + s_.cannon_x) * kChannels + kCannon] = 1;
  const int direction_channel = s_.alien_dir < 0 ? kAlienLeft : kAlienRight;
  for (int y = 0; y < kGridSize; ++y) {
    uint8_t* row = out + y * kGridSize * kChannels;
    for (unsigned bits = s_.aliens[y]; bits != 0; bits &= bits - 1) {
      uint8_t* cell = row + __builtin_ctz(bits) * kChannels;
      cell[kAlien] = 1;
      cell[direction_channel] = 1;
    }
    for (unsigned bits = s_.bullets[y]; bits != 0; bits &= bits - 1) {
      row[__builtin_ctz(bits) * kChannels + kFriendlyBullet] = 1;
    }
    for (unsigned bits = s_.enemy_bullets[y]; bits != 0; bits &= bits - 1) {
      row[__builtin_ctz(bits) * kChannels + kEnemyBullet] = 1;
    }
  }
}

void SpaceInvaders::save_game(MinAtarStateWriter& out) const {
  out.put(s_.cannon_x);
  out.put(s_.shot_cooldown);
  for (uint16_t row : s_.aliens) out.put(row);
  for (uint16_t row : s_.bullets) out.put(row);
  for (uint16_t row : s_.enemy_bullets) out.put(row);
  out.put(s_.alien_dir);
  out.put(s_.alien_move_interval);
  out.put(s_.alien_move_timer);
  out.put(s_.alien_shot_timer);
  out.put(s_.ramp_level);
}

void SpaceInvaders::load_game(MinAtarStateReader& in) {
  State s;
  s.cannon_x = in.take("cannon_x", 0, kLast);
  s.shot_cooldown = in.take("shot_cooldown", 0, kShotCooldown);
  for (uint16_t& row : s.aliens) row = static_cast<uint16_t>(in.take("aliens row bits", 0, kFullRow));
  for (uint16_t& row : s.bullets) row = static_cast<uint16_t>(in.take("bullets row bits", 0, kFullRow));
  for (uint16_t& row : s.enemy_bullets) row = static_cast<uint16_t>(in.take("enemy_bullets row bits", 0, kFullRow));
  s.alien_dir = in.take("alien_dir", -1, 1);
  if (s.alien_dir == 0) in.fail("alien_dir must be -1 or +1");
  s.alien_move_interval = in.take("alien_move_interval", kMinMoveInterval, kStartMoveInterval);
  s.alien_move_timer = in.take("alien_move_timer", 0, kStartMoveInterval);
  s.alien_shot_timer = in.take("alien_shot_timer", 0, kEnemyShotInterval);
  s.ramp_level = in.take("ramp_level", 0, 1 << 30);
  if (count(s.aliens) == 0) in.fail("a game always has aliens (a cleared wave is replaced on the same frame)");
  s_ = s;
}

}  // namespace rlx
