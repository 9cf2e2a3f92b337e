// A stand-in for "your own program": a CartPole simulation of its own (Gymnasium's CartPole-v1
// dynamics, 500-step limit) whose controller is a policy trained by rlx and exported with
// `rlx export CHECKPOINT -o policy.rlxp`. Prints each episode's return, then a JSON summary.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "models/policy.h"

namespace {

// The application's own plant: Gymnasium's CartPole-v1 (Euler integration, tau 0.02).
class CartPole {
 public:
  explicit CartPole(unsigned seed) : engine_(seed) {}

  std::vector<float> reset() {
    std::uniform_real_distribution<double> start(-0.05, 0.05);
    for (double& v : state_) v = start(engine_);
    return observation();
  }

  // Applies a push (0: left, 1: right); returns true when the pole fell or the cart left the track.
  bool step(int64_t push) {
    const double gravity = 9.8, cart_mass = 1.0, pole_mass = 0.1, half_length = 0.5, tau = 0.02;
    const double total_mass = cart_mass + pole_mass, pole_moment = pole_mass * half_length;
    const double force = push == 1 ? 10.0 : -10.0;
    double& x = state_[0];
    double& x_dot = state_[1];
    double& theta = state_[2];
    double& theta_dot = state_[3];
    const double cos_t = std::cos(theta), sin_t = std::sin(theta);
    const double temp = (force + pole_moment * theta_dot * theta_dot * sin_t) / total_mass;
    const double theta_acc =
        (gravity * sin_t - cos_t * temp) / (half_length * (4.0 / 3.0 - pole_mass * cos_t * cos_t / total_mass));
    const double x_acc = temp - pole_moment * theta_acc * cos_t / total_mass;
    x += tau * x_dot;
    x_dot += tau * x_acc;
    theta += tau * theta_dot;
    theta_dot += tau * theta_acc;
    return x < -2.4 || x > 2.4 || theta < -0.2095 || theta > 0.2095;
  }

  std::vector<float> observation() const {
    return {static_cast<float>(state_[0]), static_cast<float>(state_[1]), static_cast<float>(state_[2]),
            static_cast<float>(state_[3])};
  }

 private:
  std::mt19937 engine_;
  double state_[4] = {0, 0, 0, 0};
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: cartpole_app POLICY.rlxp [--episodes N] [--seed S]\n";
    return 2;
  }
  int episodes = 5;
  unsigned seed = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--episodes") episodes = std::atoi(argv[i + 1]);
    else if (flag == "--seed") seed = static_cast<unsigned>(std::atoi(argv[i + 1]));
    else {
      std::cerr << "cartpole_app: unknown option " << flag << "\n";
      return 2;
    }
  }
  try {
    rlx::Policy policy(argv[1]);
    if (!policy.discrete_actions() || policy.observation_size() != 4 || policy.action_size() != 2) {
      std::cerr << "cartpole_app: " << argv[1] << " is a policy for " << policy.env_id()
                << ", not for CartPole's 4 observations and 2 actions\n";
      return 2;
    }
    CartPole plant(seed);
    double total = 0;
    for (int episode = 0; episode < episodes; ++episode) {
      std::vector<float> obs = plant.reset();
      std::vector<float> state = policy.initial_state();  // a recurrent policy's memory; empty for a memoryless one
      int steps = 0;
      bool fell = false;
      while (!fell && steps < 500) {
        rlx::PolicyAction action = policy.act(obs, state, /*deterministic=*/true);
        state = std::move(action.state);
        fell = plant.step(action.index);
        obs = plant.observation();
        ++steps;
      }
      std::cout << "episode " << episode << ": return " << steps << "\n";
      total += steps;
    }
    std::cout << "{\"episodes\": " << episodes << ", \"return_mean\": " << total / episodes << ", \"policy\": \""
              << policy.algorithm() << " on " << policy.env_id() << "\"}\n";
  } catch (const rlx::PolicyFileError& error) {
    std::cerr << "cartpole_app: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
