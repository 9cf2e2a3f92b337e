#include "envs/minatar/freeway.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace rlx {
namespace {

constexpr int kLast = MinAtarGame::kGridSize - 1;
constexpr int kChickenCooldown = 3;
constexpr int kMaxSpeed = 5;

}  // namespace

Freeway::Freeway(MinAtarOptions options) : MinAtarGame(options) {}

std::vector<std::string> Freeway::channel_names() const {
  return {"chicken", "car", "speed1", "speed2", "speed3", "speed4", "speed5"};
}

std::vector<int> Freeway::minimal_action_set() const { return {kNoop, kUp, kDown}; }

void Freeway::randomize_cars(Rng& rng) {
  // All eight slownesses (uniform in 1..5) are drawn before all eight directions.
  for (Car& car : s_.cars) car.speed = 1 + static_cast<int>(rng.uniform_int(kMaxSpeed));
  for (Car& car : s_.cars) {
    if (rng.uniform() < 0.5) car.speed = -car.speed;
    car.timer = std::abs(car.speed);
  }
}

void Freeway::reset_game(Rng& rng) {
  s_ = State();
  randomize_cars(rng);
  for (Car& car : s_.cars) car.x = 0;
  s_.chicken_y = kLast;
  s_.move_cooldown = kChickenCooldown;
  s_.frames_left = kTimeLimit;
}

void Freeway::check_hit(const Car& car, int row) {
  if (car.x == kChickenColumn && row == s_.chicken_y) s_.chicken_y = kLast;
}

StepOutcome Freeway::step_game(int action, Rng& rng) {
  StepOutcome outcome;
  if (s_.move_cooldown == 0 && (action == kUp || action == kDown)) {
    s_.move_cooldown = kChickenCooldown;
    s_.chicken_y = action == kUp ? std::max(0, s_.chicken_y - 1) : std::min(kLast, s_.chicken_y + 1);
  }
  if (s_.chicken_y == 0) {  // across: score, back to the start, new traffic speeds
    outcome.reward = 1.0f;
    randomize_cars(rng);
    s_.chicken_y = kLast;
  }
  for (int i = 0; i < kCars; ++i) {
    Car& car = s_.cars[i];
    const int row = i + 1;
    check_hit(car, row);
    if (car.timer == 0) {
      car.timer = std::abs(car.speed);
      car.x += car.speed > 0 ? 1 : -1;
      if (car.x < 0) car.x = kLast;
      if (car.x > kLast) car.x = 0;
      check_hit(car, row);
    } else {
      --car.timer;
    }
  }
  if (s_.move_cooldown > 0) --s_.move_cooldown;
  --s_.frames_left;
  outcome.terminal = s_.frames_left < 0;
  return outcome;
}

void Freeway::write_observation(uint8_t* out) const {
  std::memset(out, 0, kGridSize * kGridSize * kChannels);
  const auto cell = [out](int x, int y, int c) -> uint8_t& { return out[(y * kGridSize + x) * kChannels + c]; };
  cell(kChickenColumn, s_.chicken_y, kChicken) = 1;
  for (int i = 0; i < kCars; ++i) {
    const Car& car = s_.cars[i];
    cell(car.x, i + 1, kCar) = 1;
    int behind = car.x + (car.speed > 0 ? -1 : 1);
    if (behind < 0) behind = kLast;
    if (behind > kLast) behind = 0;
    cell(behind, i + 1, kSpeed1 + std::abs(car.speed) - 1) = 1;
  }
}

void Freeway::save_game(MinAtarStateWriter& out) const {
  out.put(s_.chicken_y);
  out.put(s_.move_cooldown);
  out.put(s_.frames_left);
  for (const Car& car : s_.cars) {
    out.put(car.x);
    out.put(car.timer);
    out.put(car.speed);
  }
}

void Freeway::load_game(MinAtarStateReader& in) {
  State s;
  s.chicken_y = in.take("chicken_y", 0, kLast);
  s.move_cooldown = in.take("move_cooldown", 0, kChickenCooldown);
  s.frames_left = in.take("frames_left", -1, kTimeLimit);
  for (Car& car : s.cars) {
    car.x = in.take("car x", 0, kLast);
    car.timer = in.take("car timer", 0, kMaxSpeed);
    car.speed = in.take("car speed", -kMaxSpeed, kMaxSpeed);
    if (car.speed == 0) in.fail("a car's speed must be one of +-1 to +-5, not 0");
  }
  s_ = s;
}

}  // namespace rlx
