#include "envs/minatar/asterix.h"

#include <algorithm>
#include <cstring>

namespace rlx {
namespace {

constexpr int kLast = MinAtarGame::kGridSize - 1;
constexpr int kTopRow = 1;  // the player stays within the lanes' rows
constexpr int kBottomRow = 8;
constexpr int kStartSpawnInterval = 10;
constexpr int kStartMoveInterval = 5;
constexpr int kRampInterval = 100;
constexpr double kGoldChance = 1.0 / 3.0;
constexpr int kStartPosition = 5;

}  // namespace

Asterix::Asterix(MinAtarOptions options) : MinAtarGame(options) {}

std::vector<std::string> Asterix::channel_names() const { return {"player", "enemy", "trail", "gold"}; }

std::vector<int> Asterix::minimal_action_set() const { return {kNoop, kLeft, kUp, kRight, kDown}; }

void Asterix::reset_game(Rng& /*rng*/) {
  s_ = State();
  s_.player_x = kStartPosition;
  s_.player_y = kStartPosition;
  s_.spawn_interval = s_.spawn_timer = kStartSpawnInterval;
  s_.move_interval = s_.move_timer = kStartMoveInterval;
  s_.ramp_timer = kRampInterval;
}

void Asterix::spawn(Rng& rng) {
  // Direction and kind are drawn first; then a uniformly chosen free lane, if any, gets it.
  const bool moving_right = rng.uniform() < 0.5;
  const bool gold = rng.uniform() < kGoldChance;
  int free_lanes = 0;
  for (const Lane& lane : s_.lanes) free_lanes += lane.occupied ? 0 : 1;
  if (free_lanes == 0) return;
  int pick = static_cast<int>(rng.uniform_int(free_lanes));
  for (Lane& lane : s_.lanes) {
    if (lane.occupied || pick-- > 0) continue;
    lane = Lane{true, moving_right ? 0 : kLast, moving_right, gold};
    return;
  }
}

void Asterix::touch(StepOutcome& outcome) {
  Lane& lane = s_.lanes[s_.player_y - kTopRow];
  if (!lane.occupied || lane.x != s_.player_x) return;
  if (lane.gold) {
    lane.occupied = false;
    outcome.reward += 1.0f;
  } else {
    outcome.terminal = true;
  }
}

void Asterix::ramp_difficulty() {
  // Every other ramp also speeds up movement; spawning speeds up every ramp.
  if (s_.move_interval > 1 && s_.ramp_level % 2 == 1) --s_.move_interval;
  if (s_.spawn_interval > 1) --s_.spawn_interval;
  ++s_.ramp_level;
  s_.ramp_timer = kRampInterval;
}

StepOutcome Asterix::step_game(int action, Rng& rng) {
  StepOutcome outcome;
  if (s_.spawn_timer == 0) {
    spawn(rng);
    s_.spawn_timer = s_.spawn_interval;
  }
  switch (action) {
    case kLeft: s_.player_x = std::max(0, s_.player_x - 1); break;
    case kRight: s_.player_x = std::min(kLast, s_.player_x + 1); break;
    case kUp: s_.player_y = std::max(kTopRow, s_.player_y - 1); break;
    case kDown: s_.player_y = std::min(kBottomRow, s_.player_y + 1); break;
    default: break;
  }
  touch(outcome);  // the player may have stepped onto something
  if (s_.move_timer == 0) {
    s_.move_timer = s_.move_interval;
    for (Lane& lane : s_.lanes) {
      if (!lane.occupied) continue;
      lane.x += lane.moving_right ? 1 : -1;
      if (lane.x < 0 || lane.x > kLast) lane.occupied = false;
    }
    touch(outcome);  // something may have moved onto the player
  }
  --s_.spawn_timer;
  --s_.move_timer;
  if (ramping() && (s_.spawn_interval > 1 || s_.move_interval > 1)) {
    if (s_.ramp_timer >= 0) {
      --s_.ramp_timer;
    } else {
      ramp_difficulty();
    }
  }
  return outcome;
}

void Asterix::write_observation(uint8_t* out) const {
  std::memset(out, 0, kGridSize * kGridSize * kChannels);
  const auto cell = [out](int x, int y, int c) -> uint8_t& { return out[(y * kGridSize + x) * kChannels + c]; };
  cell(s_.player_x, s_.player_y, kPlayer) = 1;
  for (int i = 0; i < kLanes; ++i) {
    const Lane& lane = s_.lanes[i];
    if (!lane.occupied) continue;
    const int y = i + kTopRow;
    cell(lane.x, y, lane.gold ? kGold : kEnemy) = 1;
    const int behind = lane.x + (lane.moving_right ? -1 : 1);
    if (behind >= 0 && behind <= kLast) cell(behind, y, kTrail) = 1;
  }
}

void Asterix::save_game(MinAtarStateWriter& out) const {
  out.put(s_.player_x);
  out.put(s_.player_y);
  for (const Lane& lane : s_.lanes) {
    out.put(lane.occupied);
    out.put(lane.x);
    out.put(lane.moving_right);
    out.put(lane.gold);
  }
  out.put(s_.spawn_interval);
  out.put(s_.spawn_timer);
  out.put(s_.move_interval);
  out.put(s_.move_timer);
  out.put(s_.ramp_timer);
  out.put(s_.ramp_level);
}

void Asterix::load_game(MinAtarStateReader& in) {
  State s;
  s.player_x = in.take("player_x", 0, kLast);
  s.player_y = in.take("player_y", kTopRow, kBottomRow);
  for (Lane& lane : s.lanes) {
    lane.occupied = in.take_bool("lane occupied");
    lane.x = in.take("lane x", 0, kLast);
    lane.moving_right = in.take_bool("lane moving_right");
    lane.gold = in.take_bool("lane gold");
  }
  s.spawn_interval = in.take("spawn_interval", 1, kStartSpawnInterval);
  s.spawn_timer = in.take("spawn_timer", 0, kStartSpawnInterval);
  s.move_interval = in.take("move_interval", 1, kStartMoveInterval);
  s.move_timer = in.take("move_timer", 0, kStartMoveInterval);
  s.ramp_timer = in.take("ramp_timer", -1, kRampInterval);
  s.ramp_level = in.take("ramp_level", 0, 1 << 30);
  s_ = s;
}

}  // namespace rlx
