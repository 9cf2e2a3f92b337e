// MinAtar Freeway: lead a chicken up across eight lanes of traffic.
#pragma once

#include <string>
#include <vector>

#include "envs/minatar/minatar_game.h"

namespace rlx {

// The chicken walks up and down column 4, at most one cell every 3 frames. Reaching the top row
// gives +1, sends it back to the bottom and redraws the cars' speeds; a car hitting it sends it
// back to the bottom. One car per lane (rows 1 to 8) drives left or right, wrapping around, one
// cell every |speed| + 1 frames. The episode ends after 2,501 frames. No difficulty ramping.
class Freeway final : public MinAtarGame {
 public:
  // Observation channels, in order: speedN marks the cell behind a car of speed N.
  enum Channel : int { kChicken = 0, kCar = 1, kSpeed1 = 2, kSpeed5 = 6 };
  static constexpr int kChannels = 7;
  static constexpr int kCars = 8;         // car i drives in row i + 1
  static constexpr int kChickenColumn = 4;
  static constexpr int kTimeLimit = 2500;  // the episode ends on the frame that takes it below 0

  explicit Freeway(MinAtarOptions options = {});

  std::string name() const override { return "freeway"; }
  int channels() const override { return kChannels; }
  std::vector<std::string> channel_names() const override;
  // noop, up, down.
  std::vector<int> minimal_action_set() const override;
  void write_observation(uint8_t* out) const override;

 protected:
  void reset_game(Rng& rng) override;
  StepOutcome step_game(int action, Rng& rng) override;
  void save_game(MinAtarStateWriter& out) const override;
  void load_game(MinAtarStateReader& in) override;

 private:
  struct Car {
    int x = 0;
    int timer = 1;  // the car moves on the frame that starts with it at 0, then waits |speed| frames
    int speed = 1;  // +-1 to +-5: the sign is the direction (+ is right), |speed| the slowness
  };
  struct State {
    int chicken_y = 9;
    int move_cooldown = 3;  // the chicken may move when it is 0
    int frames_left = kTimeLimit;
    Car cars[kCars];
  };

  // New random speeds and directions for every car (positions stay).
  void randomize_cars(Rng& rng);
  // Sends the chicken back to the bottom if `car`, driving in `row`, is on the chicken's cell.
  void check_hit(const Car& car, int row);

  State s_;
};

}  // namespace rlx
