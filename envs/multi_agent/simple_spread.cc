#include "envs/multi_agent/simple_spread.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

// Sources checked (PettingZoo, Farama-Foundation/PettingZoo): pettingzoo/mpe/simple_spread/
// simple_spread.py (make_world, reset_world, reward, global_reward, observation),
// pettingzoo/mpe/_mpe_utils/core.py (World: dt 0.1, damping 0.25, contact_force 1e2,
// contact_margin 1e-3, mass 1, softplus penetration via np.logaddexp) and
// pettingzoo/mpe/_mpe_utils/simple_env.py (_set_action: sensitivity 5.0 unless agent.accel is set,
// which simple_spread leaves unset; rewards mixed by local_ratio after world.step(); truncation
// once steps >= max_cycles). The facts agree with the brief. Differences, by choice:
// - PettingZoo computes contact forces for every pair of colliding entities, dividing by their
//   distance; at distance exactly 0 that is NaN. Here such a pair exerts no force.
// - The initial state comes from rlx's Rng, not NumPy's, so seeds do not reproduce PettingZoo's.
// - PettingZoo's observation is float64 in a float32 Box; here it is written as float32.

namespace rlx {
namespace {

constexpr double kCollisionDistance = 2.0 * SimpleSpreadWorld::kAgentSize;

double distance(const SpreadVec& a, const SpreadVec& b) { return std::hypot(a.x - b.x, a.y - b.y); }

// log(1 + exp(x)) without overflow (NumPy's logaddexp(0, x)).
double softplus(double x) { return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// The unit push of a discrete action: 0 none, 1 -x, 2 +x, 3 -y, 4 +y.
SpreadVec move_direction(int move) {
  switch (move) {
    case 0: return {0.0, 0.0};
    case 1: return {-1.0, 0.0};
    case 2: return {1.0, 0.0};
    case 3: return {0.0, -1.0};
    case 4: return {0.0, 1.0};
    default:
      throw std::invalid_argument("SimpleSpread-v0 action must be in [0, 5) (0 no-op, 1 left, 2 right, 3 down, 4 up), got " +
                                  std::to_string(move));
  }
}

}  // namespace

void SimpleSpreadWorld::randomize(Rng& rng) {
  for (int i = 0; i < kAgents; ++i) {
    agent_pos[i].x = rng.uniform(-1.0, 1.0);
    agent_pos[i].y = rng.uniform(-1.0, 1.0);
    agent_vel[i] = SpreadVec{};
  }
  for (SpreadVec& landmark : landmark_pos) {
    landmark.x = rng.uniform(-1.0, 1.0);
    landmark.y = rng.uniform(-1.0, 1.0);
  }
}

void SimpleSpreadWorld::step(const std::array<int, kAgents>& moves) {
  std::array<SpreadVec, kAgents> force{};
  for (int i = 0; i < kAgents; ++i) {
    const SpreadVec direction = move_direction(moves[i]);
    force[i] = {direction.x * kAccel, direction.y * kAccel};
  }
  // Soft contact between every pair of agents, from the positions before the step. The softplus
  // makes the push nonzero (but below 1e-15 beyond 0.035 of clearance) even when apart.
  for (int a = 0; a < kAgents; ++a) {
    for (int b = a + 1; b < kAgents; ++b) {
      const double dx = agent_pos[a].x - agent_pos[b].x;
      const double dy = agent_pos[a].y - agent_pos[b].y;
      const double dist = std::hypot(dx, dy);
      if (dist == 0.0) continue;  // no direction to push along (PettingZoo: NaN)
      const double penetration = softplus(-(dist - kCollisionDistance) / kContactMargin) * kContactMargin;
      const double scale = kContactForce * penetration / dist;
      force[a].x += scale * dx;
      force[a].y += scale * dy;
      force[b].x -= scale * dx;
      force[b].y -= scale * dy;
    }
  }
  for (int i = 0; i < kAgents; ++i) {
    agent_vel[i].x = agent_vel[i].x * (1.0 - kDamping) + force[i].x / kMass * kDt;
    agent_vel[i].y = agent_vel[i].y * (1.0 - kDamping) + force[i].y / kMass * kDt;
    agent_pos[i].x += agent_vel[i].x * kDt;
    agent_pos[i].y += agent_vel[i].y * kDt;
  }
}

double SimpleSpreadWorld::global_reward() const {
  double reward = 0.0;
  for (const SpreadVec& landmark : landmark_pos) {
    double nearest = std::numeric_limits<double>::infinity();
    for (const SpreadVec& agent : agent_pos) nearest = std::min(nearest, distance(agent, landmark));
    reward -= nearest;
  }
  return reward;
}

double SimpleSpreadWorld::local_reward(int agent) const {
  const SpreadVec& self = agent_pos.at(static_cast<size_t>(agent));
  double reward = 0.0;
  for (int other = 0; other < kAgents; ++other) {
    if (other != agent && distance(agent_pos[other], self) < kCollisionDistance) reward -= 1.0;
  }
  return reward;
}

double SimpleSpreadWorld::reward(int agent) const {
  return (1.0 - kLocalRatio) * global_reward() + kLocalRatio * local_reward(agent);
}

void SimpleSpreadWorld::observe(int agent, float* obs) const {
  const SpreadVec& self = agent_pos.at(static_cast<size_t>(agent));
  int k = 0;
  const auto put = [&](double x, double y) {
    obs[k++] = static_cast<float>(x);
    obs[k++] = static_cast<float>(y);
  };
  put(agent_vel[agent].x, agent_vel[agent].y);
  put(self.x, self.y);
  for (const SpreadVec& landmark : landmark_pos) put(landmark.x - self.x, landmark.y - self.y);
  for (int other = 0; other < kAgents; ++other) {
    if (other != agent) put(agent_pos[other].x - self.x, agent_pos[other].y - self.y);
  }
  for (int other = 0; other < kAgents - 1; ++other) put(0.0, 0.0);  // silent agents say nothing
}

MultiAgentEnvSpec SimpleSpreadEnv::default_spec() {
  const float inf = std::numeric_limits<float>::infinity();
  MultiAgentEnvSpec spec;
  spec.id = "SimpleSpread-v0";
  for (int i = 0; i < SimpleSpreadWorld::kAgents; ++i) {
    spec.agents.push_back(AgentSpec{"agent_" + std::to_string(i), Space::box({SimpleSpreadWorld::kObservationSize}, -inf, inf),
                                    Space::discrete(SimpleSpreadWorld::kActions), false});
  }
  spec.max_episode_steps = kMaxCycles;
  return spec;
}

SimpleSpreadEnv::SimpleSpreadEnv() : MultiAgentEnv(default_spec()) {}

void SimpleSpreadEnv::observe_all(MultiAgentOutput& out) const {
  for (int agent = 0; agent < SimpleSpreadWorld::kAgents; ++agent) {
    ObsSpan obs = out.observe(agent);
    world_.observe(agent, obs.data());
  }
}

void SimpleSpreadEnv::reset_episode(Rng& rng, MultiAgentOutput& out) {
  world_.randomize(rng);
  observe_all(out);
}

void SimpleSpreadEnv::step_episode(const std::vector<AgentAction>& actions, MultiAgentOutput& out) {
  std::array<int, SimpleSpreadWorld::kAgents> moves{};
  for (const AgentAction& action : actions) {
    if (action.action.index < 0 || action.action.index >= SimpleSpreadWorld::kActions) {
      throw std::invalid_argument("SimpleSpread-v0: agent_" + std::to_string(action.agent) + "'s action must be in [0, 5), got " +
                                  std::to_string(action.action.index));
    }
    moves[static_cast<size_t>(action.agent)] = static_cast<int>(action.action.index);
  }
  world_.step(moves);
  const double shared = world_.global_reward();
  for (int agent = 0; agent < SimpleSpreadWorld::kAgents; ++agent) {
    out.add_reward(agent, (1.0 - SimpleSpreadWorld::kLocalRatio) * shared + SimpleSpreadWorld::kLocalRatio * world_.local_reward(agent));
  }
  observe_all(out);
}

void register_simple_spread(EnvRegistrar& registrar) {
  registrar.add_multi_agent(SimpleSpreadEnv::default_spec(), [] { return std::make_unique<SimpleSpreadEnv>(); });
}

}  // namespace rlx
