// The `simple_spread_oracle` scripted rule: a hand-written SimpleSpread-v0 player that reads one
// agent's own observation only, so every agent may run it as its own (or a shared) policy.
//
// From the 18 floats (envs/multi_agent/simple_spread.h) it rebuilds every agent's and landmark's
// position, assigns the agents to the landmarks so that the summed distance is least (all 6
// permutations), and steers its own agent to its landmark. Every agent computes the same
// assignment: the agents are ordered by position (x, then y), not by index, which the observation
// does not give, and a tie goes to the first permutation in lexicographic order. Two agents
// whose landmarks lie closer than kSimpleSpreadStandOff stand off along the line between them,
// that far apart: agents collide below 0.3, and an overlapping pair costs the agents' summed
// reward 1 per step, standing off at most 1.5 * 0.36. On the way it seeks no collisions and
// avoids none.
//
// Steering is a short look-ahead over the env's own physics for a lone agent (damping 0.25, 0.5 of
// velocity per push, dt 0.1, one axis per move): it tries every sequence of the next
// kSimpleSpreadPlanMoves moves and takes the first move of the sequence whose summed distance to
// the target over those steps is least. So it goes at full speed, brakes in time and holds the
// target, to within the 0.05-per-step resolution of a Discrete(5) push. Planning further ahead
// (up to 6 moves, or with coasting after the moves) gained nothing measurable.
#pragma once

#include "core/env_spec.h"
#include "envs/multi_agent/simple_spread.h"

namespace rlx {

// What the rule decides for one observation.
struct SimpleSpreadOraclePlan {
  int landmark = 0;   // the landmark assigned to the observing agent, in observation order
  SpreadVec target;   // where the agent means to stand: its landmark, or beside it (see above)
  int move = 0;       // its action: 0 no-op, 1 -x, 2 +x, 3 -y, 4 +y
};

// Moves searched exhaustively per decision (5^4 = 625 sequences).
constexpr int kSimpleSpreadPlanMoves = 4;
// Two agents stand at least this far apart: the collision distance 0.3 plus room for overshoot.
constexpr double kSimpleSpreadStandOff = 0.36;

// The plan for one agent's kObservationSize observation floats.
SimpleSpreadOraclePlan simple_spread_oracle_plan(const float* obs);

// True when `spec` is a SimpleSpread-v0 agent's view: Box (18,) observations, Discrete(5)
// actions, no mask.
bool suits_simple_spread_oracle(const EnvSpec& spec);

}  // namespace rlx
