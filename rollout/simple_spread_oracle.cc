#include "rollout/simple_spread_oracle.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace rlx {

namespace {

using World = SimpleSpreadWorld;
constexpr int kAgents = World::kAgents;
constexpr int kLandmarks = World::kLandmarks;
static_assert(kAgents == kLandmarks, "the oracle gives each agent a landmark of its own");

// Velocity gained by one push, and the fraction kept per step.
constexpr double kPush = World::kAccel / World::kMass * World::kDt;  // 0.5
constexpr double kKeep = 1.0 - World::kDamping;                       // 0.75

double norm(double x, double y) { return std::hypot(x, y); }

// The world as one agent sees it: positions of every agent (the observer first) and landmark.
struct View {
  std::array<SpreadVec, kAgents> agents;
  std::array<SpreadVec, kLandmarks> landmarks;
  SpreadVec velocity;  // the observer's
};

View read_view(const float* obs) {
  View view;
  view.velocity = {obs[0], obs[1]};
  const SpreadVec self{obs[2], obs[3]};
  view.agents[0] = self;
  for (int l = 0; l < kLandmarks; ++l) view.landmarks[l] = {self.x + obs[4 + 2 * l], self.y + obs[5 + 2 * l]};
  const int others = 4 + 2 * kLandmarks;
  for (int a = 1; a < kAgents; ++a) view.agents[a] = {self.x + obs[others + 2 * (a - 1)], self.y + obs[others + 1 + 2 * (a - 1)]};
  return view;
}

// Each agent's target in `order` (agents by position), the same whichever agent computes it:
// the least-total-distance assignment, then targets pushed apart to kSimpleSpreadStandOff.
std::array<SpreadVec, kAgents> targets_of(const View& view, const std::array<int, kAgents>& order, std::array<int, kAgents>& landmark_of) {
  constexpr double kTie = 1e-6;  // costs closer than this are a tie, whatever the rounding of each agent's view
  std::array<int, kLandmarks> perm{};
  for (int l = 0; l < kLandmarks; ++l) perm[l] = l;
  double best = std::numeric_limits<double>::infinity();
  do {
    double cost = 0.0;
    for (int k = 0; k < kAgents; ++k) {
      const SpreadVec& a = view.agents[order[k]];
      const SpreadVec& l = view.landmarks[perm[k]];
      cost += norm(a.x - l.x, a.y - l.y);
    }
    if (cost < best - kTie) {
      best = cost;
      landmark_of = perm;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));

  std::array<SpreadVec, kAgents> targets{};
  for (int k = 0; k < kAgents; ++k) targets[k] = view.landmarks[landmark_of[k]];
  for (int pass = 0; pass < 8; ++pass) {  // a pair apart at a time; three close landmarks settle in a few passes
    for (int a = 0; a < kAgents; ++a) {
      for (int b = a + 1; b < kAgents; ++b) {
        const double dx = targets[b].x - targets[a].x, dy = targets[b].y - targets[a].y;
        const double d = norm(dx, dy);
        if (d >= kSimpleSpreadStandOff) continue;
        const double ux = d > 1e-9 ? dx / d : 1.0, uy = d > 1e-9 ? dy / d : 0.0;  // coincident: apart along x
        const double half = (kSimpleSpreadStandOff - d) / 2.0;
        targets[a] = {targets[a].x - ux * half, targets[a].y - uy * half};
        targets[b] = {targets[b].x + ux * half, targets[b].y + uy * half};
      }
    }
  }
  return targets;
}

// The observer's offset from its target and its velocity.
struct Motion {
  double x, y, vx, vy;
};

// One step of the env's physics for a lone agent: the push of `move`, damping, then the move.
Motion advance(Motion m, int move) {
  m.vx = m.vx * kKeep + (move == 1 ? -kPush : move == 2 ? kPush : 0.0);
  m.vy = m.vy * kKeep + (move == 3 ? -kPush : move == 4 ? kPush : 0.0);
  m.x += m.vx * World::kDt;
  m.y += m.vy * World::kDt;
  return m;
}

// The least summed distance to the target over the next `moves` steps, whatever the moves.
double plan_cost(const Motion& m, int moves) {
  if (moves == 0) return 0.0;
  double best = std::numeric_limits<double>::infinity();
  for (int move = 0; move < World::kActions; ++move) {
    const Motion next = advance(m, move);
    best = std::min(best, norm(next.x, next.y) + plan_cost(next, moves - 1));
  }
  return best;
}

}  // namespace

SimpleSpreadOraclePlan simple_spread_oracle_plan(const float* obs) {
  const View view = read_view(obs);
  std::array<int, kAgents> order{};  // agents by position, x then y
  for (int a = 0; a < kAgents; ++a) order[a] = a;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const SpreadVec &p = view.agents[a], &q = view.agents[b];
    return p.x != q.x ? p.x < q.x : p.y < q.y;
  });
  std::array<int, kAgents> landmark_of{};
  const std::array<SpreadVec, kAgents> targets = targets_of(view, order, landmark_of);
  const int rank = static_cast<int>(std::find(order.begin(), order.end(), 0) - order.begin());  // the observer's place

  SimpleSpreadOraclePlan plan;
  plan.landmark = landmark_of[rank];
  plan.target = targets[rank];
  const Motion now{view.agents[0].x - plan.target.x, view.agents[0].y - plan.target.y, view.velocity.x, view.velocity.y};
  double best = std::numeric_limits<double>::infinity();
  for (int move = 0; move < World::kActions; ++move) {  // ties go to the lower move, the no-op first
    const Motion next = advance(now, move);
    const double cost = norm(next.x, next.y) + plan_cost(next, kSimpleSpreadPlanMoves - 1);
    if (cost < best - 1e-12) {
      best = cost;
      plan.move = move;
    }
  }
  return plan;
}

bool suits_simple_spread_oracle(const EnvSpec& spec) {
  const AgentSpec agent = SimpleSpreadEnv::default_spec().agents[0];
  return spec.observation_space == agent.observation_space && spec.action_space == agent.action_space && !spec.action_mask;
}

}  // namespace rlx
