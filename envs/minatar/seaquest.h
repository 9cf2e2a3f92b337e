// MinAtar Seaquest: a submarine shoots fish and enemy subs, rescues divers and surfaces for air.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "envs/minatar/minatar_game.h"

namespace rlx {

// The player's sub (two cells: front and back, so its heading shows) moves in rows 0 to 8 and
// fires bullets ahead (+1 for each fish or enemy sub hit). Enemies and divers cross rows 1 to 8;
// enemy subs fire too. Oxygen runs down below the surface; surfacing with a diver aboard refills
// it and uses up one diver (with all 6 aboard: all of them, for a bonus of the oxygen left), and
// ramps the difficulty. The episode ends on contact with a fish, sub or enemy bullet, when oxygen
// runs out, or when surfacing with nobody aboard.
class Seaquest final : public MinAtarGame {
 public:
  // Observation channels, in order (the reference's names).
  enum Channel : int {
    kSubFront = 0,
    kSubBack = 1,
    kFriendlyBullet = 2,
    kTrail = 3,
    kEnemyBullet = 4,
    kEnemyFish = 5,
    kEnemySub = 6,
    kOxygenGauge = 7,
    kDiverGauge = 8,
    kDiver = 9,
  };
  static constexpr int kChannels = 10;

  explicit Seaquest(MinAtarOptions options = {});

  std::string name() const override { return "seaquest"; }
  int channels() const override { return kChannels; }
  std::vector<std::string> channel_names() const override;
  // All six actions.
  std::vector<int> minimal_action_set() const override;
  int difficulty_level() const override { return s_.ramp_level; }
  void write_observation(uint8_t* out) const override;

 protected:
  void reset_game(Rng& rng) override;
  StepOutcome step_game(int action, Rng& rng) override;
  void save_game(MinAtarStateWriter& out) const override;
  void load_game(MinAtarStateReader& in) override;

 private:
  // Anything that crosses the screen: bullets, fish, enemy subs, divers.
  struct Mover {
    int8_t x = 0;
    int8_t y = 0;
    bool moving_right = false;
    int8_t move_timer = 0;  // fish, subs, divers: they move on the frame that starts with it at 0
    int8_t shot_timer = 0;  // subs: they fire on the frame that starts with it at 0
  };
  // Capacities, above what play can reach (docs/minatar.md derives the bounds).
  static constexpr int kMaxBullets = 8;
  static constexpr int kMaxDivers = 8;
  static constexpr int kMaxEnemies = 64;
  static constexpr int kMaxEnemyBullets = 128;

  struct State {
    int sub_x = 5;
    int sub_y = 0;
    bool facing_right = false;
    int oxygen = 200;
    int divers_aboard = 0;  // the reference's count, which a full surfacing leaves at -1
    bool surfaced = true;   // at the surface since the last surfacing (no second one until it dives)
    int shot_cooldown = 0;
    int enemy_spawn_interval = 20;
    int enemy_spawn_timer = 20;
    int diver_spawn_timer = 30;
    int move_interval = 5;  // frames an enemy waits between moves
    int ramp_level = 0;
    FixedList<Mover, kMaxBullets> bullets;
    FixedList<Mover, kMaxDivers> divers;
    FixedList<Mover, kMaxEnemies> subs;
    FixedList<Mover, kMaxEnemies> fish;
    FixedList<Mover, kMaxEnemyBullets> enemy_bullets;
  };

  bool at_sub(const Mover& m) const { return m.x == s_.sub_x && m.y == s_.sub_y; }
  void spawn_enemy(Rng& rng);
  void spawn_diver(Rng& rng);
  void move_bullets(StepOutcome& outcome);
  void move_divers();
  // Moves the fish (is_sub false) or the enemy subs, newest first; subs also fire.
  void move_enemies(bool is_sub, StepOutcome& outcome);
  void move_enemy_bullets(StepOutcome& outcome);
  // The player's sub reached the surface: air, divers, bonus and difficulty; returns the bonus.
  int surface();

  State s_;
};

}  // namespace rlx
