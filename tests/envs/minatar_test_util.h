// Helpers of the MinAtar tests: observations read cell by cell, and exact states built field by
// field in the layout each game's save_game writes (after the base's last action and terminal
// flag), so that a test can start a game in any situation through restore_exact_state.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "envs/minatar/minatar_game.h"

namespace minatar_test {

using rlx::MinAtarGame;
using rlx::MinAtarOptions;
using rlx::Rng;

inline constexpr MinAtarOptions kNoSticky{0.0, true};

// A game's observation, read cell by cell.
struct Observation {
  std::vector<uint8_t> bytes;
  int channels = 0;

  bool at(int x, int y, int c) const { return bytes.at(static_cast<size_t>((y * 10 + x) * channels + c)) == 1; }
  // Cells set in channel c.
  int count(int c) const {
    int n = 0;
    for (int cell = 0; cell < 100; ++cell) n += bytes[static_cast<size_t>(cell * channels + c)];
    return n;
  }
};

// The game's current observation.
inline Observation observe(const MinAtarGame& game) {
  Observation obs{std::vector<uint8_t>(static_cast<size_t>(game.observation_size())), game.channels()};
  game.write_observation(obs.bytes.data());
  return obs;
}

// A new game, by default without sticky actions.
inline std::unique_ptr<MinAtarGame> make(const std::string& name, MinAtarOptions options = kNoSticky) {
  return rlx::make_minatar_game(name, options);
}

// Breakout: paddle, ball (x, y, dx, dy), trail, striking, brick rows (bit x = column x).
inline std::vector<double> breakout_state(int paddle_x, int ball_x, int ball_y, int dx, int dy,
                                          const std::array<int, 10>& bricks, bool striking = false) {
  std::vector<double> s = {0, 0, double(paddle_x), double(ball_x), double(ball_y), double(dx), double(dy),
                           double(ball_x), double(ball_y), double(striking)};
  for (int row : bricks) s.push_back(row);
  return s;
}
inline constexpr std::array<int, 10> kFullWall = {0, 1023, 1023, 1023, 0, 0, 0, 0, 0, 0};
inline constexpr std::array<int, 10> kNoBricks = {};

// Asterix: player, 8 lanes (occupied, x, moving_right, gold), spawn interval/timer, move
// interval/timer, ramp timer and level.
struct AsterixSetup {
  int player_x = 5, player_y = 5;
  struct Lane {
    bool occupied = false;
    int x = 0;
    bool moving_right = false;
    bool gold = false;
  };
  std::array<Lane, 8> lanes{};
  int spawn_interval = 10, spawn_timer = 10, move_interval = 5, move_timer = 5, ramp_timer = 100, ramp_level = 0;
};
inline std::vector<double> asterix_state(const AsterixSetup& a) {
  std::vector<double> s = {0, 0, double(a.player_x), double(a.player_y)};
  for (const auto& lane : a.lanes) s.insert(s.end(), {double(lane.occupied), double(lane.x), double(lane.moving_right), double(lane.gold)});
  s.insert(s.end(), {double(a.spawn_interval), double(a.spawn_timer), double(a.move_interval), double(a.move_timer),
                     double(a.ramp_timer), double(a.ramp_level)});
  return s;
}

// Freeway: chicken row, move cooldown, frames left, 8 cars (x, timer, signed speed).
struct FreewaySetup {
  int chicken_y = 9, cooldown = 0, frames_left = 2500;
  struct Car {
    int x = 9, timer = 5, speed = 5;  // far from the chicken's column, slow
  };
  std::array<Car, 8> cars{};
};
inline std::vector<double> freeway_state(const FreewaySetup& f) {
  std::vector<double> s = {0, 0, double(f.chicken_y), double(f.cooldown), double(f.frames_left)};
  for (const auto& car : f.cars) s.insert(s.end(), {double(car.x), double(car.timer), double(car.speed)});
  return s;
}

// Seaquest: the sub, counters, then five lists padded to their capacities (8, 8, 64, 64, 128) of
// (x, y, moving_right, move_timer, shot_timer).
struct SeaquestSetup {
  int sub_x = 5, sub_y = 4;
  bool facing_right = false;
  int oxygen = 200, divers_aboard = 0;
  bool surfaced = false;
  int shot_cooldown = 0, enemy_spawn_interval = 20, enemy_spawn_timer = 20, diver_spawn_timer = 30;
  int move_interval = 5, ramp_level = 0;
  struct Mover {
    int x, y;
    bool moving_right;
    int move_timer = 0, shot_timer = 0;
  };
  std::vector<Mover> bullets, divers, subs, fish, enemy_bullets;
};
inline std::vector<double> seaquest_state(const SeaquestSetup& q) {
  std::vector<double> s = {0,
                           0,
                           double(q.sub_x),
                           double(q.sub_y),
                           double(q.facing_right),
                           double(q.oxygen),
                           double(q.divers_aboard),
                           double(q.surfaced),
                           double(q.shot_cooldown),
                           double(q.enemy_spawn_interval),
                           double(q.enemy_spawn_timer),
                           double(q.diver_spawn_timer),
                           double(q.move_interval),
                           double(q.ramp_level)};
  const auto add = [&s](const std::vector<SeaquestSetup::Mover>& list, int capacity) {
    s.push_back(double(list.size()));
    for (int i = 0; i < capacity; ++i) {
      if (i < int(list.size())) {
        const auto& m = list[size_t(i)];
        s.insert(s.end(), {double(m.x), double(m.y), double(m.moving_right), double(m.move_timer), double(m.shot_timer)});
      } else {
        s.insert(s.end(), {0, 0, 0, 0, 0});
      }
    }
  };
  add(q.bullets, 8);
  add(q.divers, 8);
  add(q.subs, 64);
  add(q.fish, 64);
  add(q.enemy_bullets, 128);
  return s;
}

// SpaceInvaders: cannon, shot cooldown, aliens / bullets / enemy bullets (10 row masks each),
// alien direction, move interval, move timer, shot timer, ramp level.
struct InvadersSetup {
  int cannon_x = 5, shot_cooldown = 0;
  std::array<int, 10> aliens{}, bullets{}, enemy_bullets{};
  int alien_dir = -1, move_interval = 12, move_timer = 12, shot_timer = 10, ramp_level = 0;
};
inline std::vector<double> invaders_state(const InvadersSetup& v) {
  std::vector<double> s = {0, 0, double(v.cannon_x), double(v.shot_cooldown)};
  for (const auto* grid : {&v.aliens, &v.bullets, &v.enemy_bullets}) {
    for (int row : *grid) s.push_back(row);
  }
  s.insert(s.end(), {double(v.alien_dir), double(v.move_interval), double(v.move_timer), double(v.shot_timer),
                     double(v.ramp_level)});
  return s;
}

// The row-mask bit of column x.
inline constexpr int bit(int x) { return 1 << x; }

}  // namespace minatar_test

