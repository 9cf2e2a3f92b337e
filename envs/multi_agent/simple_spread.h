// SimpleSpread-v0: PettingZoo MPE's cooperative navigation (simple_spread_v3 with its defaults:
// N = 3, local_ratio 0.5, max_cycles 25, discrete actions), written for rlx from the MPE
// description and physics.
//
// Three agents ("agent_0".."agent_2", disks of radius 0.15 that collide) and three landmarks
// (radius 0.05, no collisions) start uniformly in [-1, 1]^2 at rest. Every step all agents act at
// once with Discrete(5): 0 no-op, 1 left (-x), 2 right (+x), 3 down (-y), 4 up (+y). An agent's
// reward is 0.5 * global + 0.5 * local, where global = -(sum over landmarks of the distance to the
// nearest agent) is shared and local = -1 for each other agent it overlaps. Each agent observes 18
// unbounded floats: [own velocity (2), own position (2), landmarks relative to it (3 x 2), the
// other agents relative to it (2 x 2, in index order), their communication (2 x 2, zeros: the
// agents are silent)]. Nothing terminates; the time limit truncates every agent after 25 steps.
//
// Differences from PettingZoo (see simple_spread.cc): a pair of agents at exactly the same point
// exerts no contact force on each other (PettingZoo divides by the zero distance and gets NaN),
// and the initial state is drawn from rlx's Rng, so a seed gives a different episode than there.
#pragma once

#include <array>
#include <vector>

#include "envs/multi_agent/multi_agent_env.h"
#include "envs/registry.h"

namespace rlx {

// A point or displacement in the plane.
struct SpreadVec {
  double x = 0.0;
  double y = 0.0;
};

// The particles of one episode and MPE's physics and rewards over them; no episode bookkeeping,
// so tests and scripts can place a world by hand and step it.
struct SimpleSpreadWorld {
  static constexpr int kAgents = 3;
  static constexpr int kLandmarks = 3;
  static constexpr int kObservationSize = 4 + 2 * kLandmarks + 4 * (kAgents - 1);  // 18
  static constexpr int kActions = 5;

  static constexpr double kAgentSize = 0.15;      // agent radius; two agents collide below 0.3 apart
  static constexpr double kLandmarkSize = 0.05;   // landmark radius (landmarks never collide)
  static constexpr double kAccel = 5.0;           // MPE's default action sensitivity (force per unit action)
  static constexpr double kMass = 1.0;
  static constexpr double kDamping = 0.25;        // fraction of velocity lost per step
  static constexpr double kDt = 0.1;
  static constexpr double kContactForce = 100.0;
  static constexpr double kContactMargin = 1e-3;  // softness of the contact (softplus scale)
  static constexpr double kLocalRatio = 0.5;      // weight of the local (collision) term in each reward

  std::array<SpreadVec, kAgents> agent_pos{};
  std::array<SpreadVec, kAgents> agent_vel{};
  std::array<SpreadVec, kLandmarks> landmark_pos{};

  // Places every agent, then every landmark, uniformly in [-1, 1]^2 (x then y) and stops the agents.
  void randomize(Rng& rng);
  // Advances one dt: action forces plus pairwise contact forces, then damped semi-implicit Euler.
  // moves[i] is agent i's action in [0, kActions); throws std::invalid_argument otherwise.
  void step(const std::array<int, kAgents>& moves);
  // The shared term: minus the sum over landmarks of the distance to the nearest agent (0 at best).
  double global_reward() const;
  // Agent's own term: -1 for each other agent closer than 2 * kAgentSize to it.
  double local_reward(int agent) const;
  // Agent's reward: (1 - kLocalRatio) * global_reward() + kLocalRatio * local_reward(agent).
  double reward(int agent) const;
  // Writes the agent's kObservationSize floats (layout in the file comment) into obs.
  void observe(int agent, float* obs) const;
};

class SimpleSpreadEnv final : public MultiAgentEnv {
 public:
  static constexpr int kMaxCycles = 25;

  SimpleSpreadEnv();
  // The registered spec: id "SimpleSpread-v0", 3 agents with Box(-inf, inf, (18,)) observations and
  // Discrete(5) actions, max_episode_steps 25.
  static MultiAgentEnvSpec default_spec();

  // The current world (positions and velocities after the last reset or step).
  const SimpleSpreadWorld& world() const { return world_; }
  // Replaces the world mid-episode (for tests and scripted starts); the agents' observations show
  // it from the next step on.
  void set_world(const SimpleSpreadWorld& world) { world_ = world; }

 protected:
  // Draws the world from rng and observes every agent.
  void reset_episode(Rng& rng, MultiAgentOutput& out) override;
  // Moves every agent at once, rewards each and observes each again.
  void step_episode(const std::vector<AgentAction>& actions, MultiAgentOutput& out) override;

 private:
  void observe_all(MultiAgentOutput& out) const;

  SimpleSpreadWorld world_;
};

// Adds SimpleSpread-v0 to the registrar.
void register_simple_spread(EnvRegistrar& registrar);

}  // namespace rlx
