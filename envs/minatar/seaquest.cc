#include "envs/minatar/seaquest.h"

#include <algorithm>
#include <cstring>

namespace rlx {
namespace {

constexpr int kLast = MinAtarGame::kGridSize - 1;
constexpr int kDeepestRow = 8;  // the player's sub moves in rows 0 (the surface) to 8
constexpr int kMaxOxygen = 200;
constexpr int kMaxDiversAboard = 6;
constexpr int kStartEnemySpawnInterval = 20;
constexpr int kDiverSpawnInterval = 30;
constexpr int kStartMoveInterval = 5;
constexpr int kMinMoveInterval = 2;  // ramping stops speeding enemies up here
constexpr int kDiverMoveInterval = 5;
constexpr int kShotCooldown = 5;
constexpr int kEnemyShotInterval = 10;
constexpr double kSubChance = 1.0 / 3.0;  // an enemy spawn is a sub, else a fish
constexpr int kStartX = 5;

bool off_screen(int x) { return x < 0 || x > kLast; }
int step_of(bool moving_right) { return moving_right ? 1 : -1; }

// Index of the first element of list at (x, y), or -1.
template <typename List>
int find_at(const List& list, int x, int y) {
  for (int i = 0; i < list.size(); ++i) {
    if (list[i].x == x && list[i].y == y) return i;
  }
  return -1;
}

}  // namespace

Seaquest::Seaquest(MinAtarOptions options) : MinAtarGame(options) {}

std::vector<std::string> Seaquest::channel_names() const {
  return {"sub_front",  "sub_back",   "friendly_bullet", "trail",       "enemy_bullet",
          "enemy_fish", "enemy_sub",  "oxygen_guage",    "diver_guage", "diver"};
}

std::vector<int> Seaquest::minimal_action_set() const { return {kNoop, kLeft, kUp, kRight, kDown, kFire}; }

void Seaquest::reset_game(Rng& /*rng*/) {
  s_ = State();
  s_.sub_x = kStartX;
  s_.sub_y = 0;
  s_.facing_right = false;
  s_.oxygen = kMaxOxygen;
  s_.surfaced = true;
  s_.enemy_spawn_interval = s_.enemy_spawn_timer = kStartEnemySpawnInterval;
  s_.diver_spawn_timer = kDiverSpawnInterval;
  s_.move_interval = kStartMoveInterval;
}

void Seaquest::spawn_enemy(Rng& rng) {
  const bool moving_right = rng.uniform() < 0.5;
  const bool is_sub = rng.uniform() < kSubChance;
  const int y = 1 + static_cast<int>(rng.uniform_int(kDeepestRow));
  // No spawn into a row where an enemy already heads the other way.
  for (const auto* list : {&s_.subs, &s_.fish}) {
    for (int i = 0; i < list->size(); ++i) {
      if ((*list)[i].y == y && (*list)[i].moving_right != moving_right) return;
    }
  }
  Mover enemy;
  enemy.x = static_cast<int8_t>(moving_right ? 0 : kLast);
  enemy.y = static_cast<int8_t>(y);
  enemy.moving_right = moving_right;
  enemy.move_timer = static_cast<int8_t>(s_.move_interval);
  enemy.shot_timer = kEnemyShotInterval;
  (is_sub ? s_.subs : s_.fish).push(enemy);
}

void Seaquest::spawn_diver(Rng& rng) {
  Mover diver;
  diver.moving_right = rng.uniform() < 0.5;
  diver.x = static_cast<int8_t>(diver.moving_right ? 0 : kLast);
  diver.y = static_cast<int8_t>(1 + rng.uniform_int(kDeepestRow));
  diver.move_timer = kDiverMoveInterval;
  s_.divers.push(diver);
}

void Seaquest::move_bullets(StepOutcome& outcome) {
  // Newest first; a bullet hits the first fish, else the first sub, on the cell it moves into.
  for (int i = s_.bullets.size() - 1; i >= 0; --i) {
    Mover& bullet = s_.bullets[i];
    bullet.x = static_cast<int8_t>(bullet.x + step_of(bullet.moving_right));
    if (off_screen(bullet.x)) {
      s_.bullets.erase(i);
      continue;
    }
    for (auto* enemies : {&s_.fish, &s_.subs}) {
      const int hit = find_at(*enemies, bullet.x, bullet.y);
      if (hit < 0) continue;
      enemies->erase(hit);
      s_.bullets.erase(i);
      outcome.reward += 1.0f;
      break;
    }
  }
}

void Seaquest::move_divers() {
  // Newest first; the sub picks up a diver on its cell (before or after the diver moves) while
  // fewer than 6 are aboard.
  for (int i = s_.divers.size() - 1; i >= 0; --i) {
    Mover& diver = s_.divers[i];
    const bool room = s_.divers_aboard < kMaxDiversAboard;
    if (at_sub(diver) && room) {
      s_.divers.erase(i);
      ++s_.divers_aboard;
      continue;
    }
    if (diver.move_timer > 0) {
      --diver.move_timer;
      continue;
    }
    diver.move_timer = kDiverMoveInterval;
    diver.x = static_cast<int8_t>(diver.x + step_of(diver.moving_right));
    if (off_screen(diver.x)) {
      s_.divers.erase(i);
    } else if (at_sub(diver) && room) {
      s_.divers.erase(i);
      ++s_.divers_aboard;
    }
  }
}

void Seaquest::move_enemies(bool is_sub, StepOutcome& outcome) {
  auto& enemies = is_sub ? s_.subs : s_.fish;
  for (int i = enemies.size() - 1; i >= 0; --i) {
    Mover enemy = enemies[i];
    if (at_sub(enemy)) outcome.terminal = true;
    bool gone = false;
    if (enemy.move_timer == 0) {
      enemy.move_timer = static_cast<int8_t>(s_.move_interval);
      enemy.x = static_cast<int8_t>(enemy.x + step_of(enemy.moving_right));
      if (off_screen(enemy.x)) {
        gone = true;
      } else if (at_sub(enemy)) {
        outcome.terminal = true;
      } else if (const int hit = find_at(s_.bullets, enemy.x, enemy.y); hit >= 0) {  // ran into a bullet
        s_.bullets.erase(hit);
        outcome.reward += 1.0f;
        gone = true;
      }
    } else {
      --enemy.move_timer;
    }
    if (is_sub) {
      // A sub's shot timer runs out even on the frame it is shot; its bullet still leaves. (One
      // that just left the screen fires nothing: the reference's bullet there is gone next frame.)
      if (enemy.shot_timer == 0) {
        enemy.shot_timer = kEnemyShotInterval;
        if (!off_screen(enemy.x)) s_.enemy_bullets.push(Mover{enemy.x, enemy.y, enemy.moving_right, 0, 0});
      } else {
        --enemy.shot_timer;
      }
    }
    if (gone) {
      enemies.erase(i);
    } else {
      enemies[i] = enemy;
    }
  }
}

void Seaquest::move_enemy_bullets(StepOutcome& outcome) {
  for (int i = s_.enemy_bullets.size() - 1; i >= 0; --i) {
    Mover& bullet = s_.enemy_bullets[i];
    if (at_sub(bullet)) outcome.terminal = true;
    bullet.x = static_cast<int8_t>(bullet.x + step_of(bullet.moving_right));
    if (off_screen(bullet.x)) {
      s_.enemy_bullets.erase(i);
    } else if (at_sub(bullet)) {
      outcome.terminal = true;
    }
  }
}

int Seaquest::surface() {
  s_.surfaced = true;
  int bonus = 0;
  if (s_.divers_aboard == kMaxDiversAboard) {
    s_.divers_aboard = 0;
    bonus = s_.oxygen * 10 / kMaxOxygen;
  }
  s_.oxygen = kMaxOxygen;
  // One diver leaves, even after a full load has: the count then reads -1, and the next surfacing
  // does not end the episode (the reference's behaviour, kept).
  --s_.divers_aboard;
  if (ramping() && (s_.enemy_spawn_interval > 1 || s_.move_interval > kMinMoveInterval)) {
    if (s_.move_interval > kMinMoveInterval && s_.ramp_level % 2 == 1) --s_.move_interval;
    if (s_.enemy_spawn_interval > 1) --s_.enemy_spawn_interval;
    ++s_.ramp_level;
  }
  return bonus;
}

StepOutcome Seaquest::step_game(int action, Rng& rng) {
  StepOutcome outcome;
  if (s_.enemy_spawn_timer == 0) {
    spawn_enemy(rng);
    s_.enemy_spawn_timer = s_.enemy_spawn_interval;
  }
  if (s_.diver_spawn_timer == 0) {
    spawn_diver(rng);
    s_.diver_spawn_timer = kDiverSpawnInterval;
  }
  switch (action) {
    case kFire:  // a fire while reloading does nothing
      if (s_.shot_cooldown == 0) {
        s_.bullets.push(Mover{static_cast<int8_t>(s_.sub_x), static_cast<int8_t>(s_.sub_y), s_.facing_right, 0, 0});
        s_.shot_cooldown = kShotCooldown;
      }
      break;
    case kLeft:
      s_.sub_x = std::max(0, s_.sub_x - 1);
      s_.facing_right = false;
      break;
    case kRight:
      s_.sub_x = std::min(kLast, s_.sub_x + 1);
      s_.facing_right = true;
      break;
    case kUp: s_.sub_y = std::max(0, s_.sub_y - 1); break;
    case kDown: s_.sub_y = std::min(kDeepestRow, s_.sub_y + 1); break;
    default: break;
  }
  move_bullets(outcome);
  move_divers();
  move_enemies(/*is_sub=*/true, outcome);
  move_enemy_bullets(outcome);
  move_enemies(/*is_sub=*/false, outcome);

  if (s_.enemy_spawn_timer > 0) --s_.enemy_spawn_timer;
  if (s_.diver_spawn_timer > 0) --s_.diver_spawn_timer;
  if (s_.shot_cooldown > 0) --s_.shot_cooldown;
  if (s_.oxygen <= 0) outcome.terminal = true;
  if (s_.sub_y > 0) {
    --s_.oxygen;
    s_.surfaced = false;
  } else if (!s_.surfaced) {
    if (s_.divers_aboard == 0) {
      outcome.terminal = true;
    } else {
      outcome.reward += static_cast<float>(surface());
    }
  }
  return outcome;
}

void Seaquest::write_observation(uint8_t* out) const {
  std::memset(out, 0, kGridSize * kGridSize * kChannels);
  const auto cell = [out](int x, int y, int c) -> uint8_t& { return out[(y * kGridSize + x) * kChannels + c]; };
  cell(s_.sub_x, s_.sub_y, kSubFront) = 1;
  cell(s_.sub_x + (s_.facing_right ? -1 : 1), s_.sub_y, kSubBack) = 1;
  const int oxygen_cells = std::max(0, s_.oxygen) * 10 / kMaxOxygen;
  for (int x = 0; x < oxygen_cells; ++x) cell(x, kLast, kOxygenGauge) = 1;
  for (int x = kLast - std::max(0, s_.divers_aboard); x < kLast; ++x) cell(x, kLast, kDiverGauge) = 1;
  for (int i = 0; i < s_.bullets.size(); ++i) cell(s_.bullets[i].x, s_.bullets[i].y, kFriendlyBullet) = 1;
  for (int i = 0; i < s_.enemy_bullets.size(); ++i) {
    cell(s_.enemy_bullets[i].x, s_.enemy_bullets[i].y, kEnemyBullet) = 1;
  }
  // Fish, subs and divers leave a trail in the cell behind them.
  const auto draw = [&cell](const Mover& m, int channel) {
    cell(m.x, m.y, channel) = 1;
    const int behind = m.x - step_of(m.moving_right);
    if (!off_screen(behind)) cell(behind, m.y, kTrail) = 1;
  };
  for (int i = 0; i < s_.fish.size(); ++i) draw(s_.fish[i], kEnemyFish);
  for (int i = 0; i < s_.subs.size(); ++i) draw(s_.subs[i], kEnemySub);
  for (int i = 0; i < s_.divers.size(); ++i) draw(s_.divers[i], kDiver);
}

namespace {

// A list's exact state: its size, then all kCapacity slots (unused ones as zeros), 5 fields each.
template <typename List>
void save_list(const List& list, MinAtarStateWriter& out) {
  out.put(list.size());
  for (int i = 0; i < List::kCapacity; ++i) {
    const auto& m = list[i];
    const bool used = i < list.size();
    out.put(used ? m.x : 0);
    out.put(used ? m.y : 0);
    out.put(used && m.moving_right);
    out.put(used ? m.move_timer : 0);
    out.put(used ? m.shot_timer : 0);
  }
}

template <typename List>
void load_list(List& list, MinAtarStateReader& in, const char* name, int min_y) {
  list.clear();
  const int size = in.take(name, 0, List::kCapacity);
  for (int i = 0; i < List::kCapacity; ++i) {
    typename List::value_type m;
    m.x = static_cast<int8_t>(in.take("x", 0, kLast));
    m.y = static_cast<int8_t>(in.take("y", i < size ? min_y : 0, kDeepestRow));
    m.moving_right = in.take_bool("moving_right");
    m.move_timer = static_cast<int8_t>(in.take("move_timer", 0, kStartMoveInterval));
    m.shot_timer = static_cast<int8_t>(in.take("shot_timer", 0, kEnemyShotInterval));
    if (i < size) list.push(m);
  }
}

}  // namespace

void Seaquest::save_game(MinAtarStateWriter& out) const {
  out.put(s_.sub_x);
  out.put(s_.sub_y);
  out.put(s_.facing_right);
  out.put(s_.oxygen);
  out.put(s_.divers_aboard);
  out.put(s_.surfaced);
  out.put(s_.shot_cooldown);
  out.put(s_.enemy_spawn_interval);
  out.put(s_.enemy_spawn_timer);
  out.put(s_.diver_spawn_timer);
  out.put(s_.move_interval);
  out.put(s_.ramp_level);
  save_list(s_.bullets, out);
  save_list(s_.divers, out);
  save_list(s_.subs, out);
  save_list(s_.fish, out);
  save_list(s_.enemy_bullets, out);
}

void Seaquest::load_game(MinAtarStateReader& in) {
  State s;
  s.sub_x = in.take("sub_x", 0, kLast);
  s.sub_y = in.take("sub_y", 0, kDeepestRow);
  s.facing_right = in.take_bool("facing_right");
  if ((s.facing_right && s.sub_x == 0) || (!s.facing_right && s.sub_x == kLast)) {
    in.fail("the sub's back would be off screen (facing right at column 0 or left at column 9)");
  }
  s.oxygen = in.take("oxygen", -1, kMaxOxygen);  // -1: a finished game that ran out below
  s.divers_aboard = in.take("divers_aboard", -(1 << 30), kMaxDiversAboard);
  s.surfaced = in.take_bool("surfaced");
  s.shot_cooldown = in.take("shot_cooldown", 0, kShotCooldown);
  s.enemy_spawn_interval = in.take("enemy_spawn_interval", 1, kStartEnemySpawnInterval);
  s.enemy_spawn_timer = in.take("enemy_spawn_timer", 0, kStartEnemySpawnInterval);
  s.diver_spawn_timer = in.take("diver_spawn_timer", 0, kDiverSpawnInterval);
  s.move_interval = in.take("move_interval", kMinMoveInterval, kStartMoveInterval);
  s.ramp_level = in.take("ramp_level", 0, 1 << 30);
  load_list(s.bullets, in, "player bullets", 0);
  load_list(s.divers, in, "divers", 1);
  load_list(s.subs, in, "enemy subs", 1);
  load_list(s.fish, in, "fish", 1);
  load_list(s.enemy_bullets, in, "enemy bullets", 1);
  s_ = s;
}

}  // namespace rlx
