#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/rng.h"
#include "envs/multi_agent/simple_spread.h"
#include "envs/registry.h"

using rlx::AgentAction;
using rlx::SimpleSpreadEnv;
using rlx::SimpleSpreadWorld;
using rlx::SpreadVec;

namespace {

constexpr int kAgents = SimpleSpreadWorld::kAgents;

// One action per agent, in agent order.
std::vector<AgentAction> actions_of(const std::vector<int>& moves) {
  std::vector<AgentAction> actions;
  for (size_t i = 0; i < moves.size(); ++i) {
    AgentAction action;
    action.agent = static_cast<int>(i);
    action.action.index = moves[i];
    actions.push_back(action);
  }
  return actions;
}

const std::vector<int> kNoOps(kAgents, 0);

// The agent's observation floats.
std::vector<float> observation_of(rlx::MultiAgentEnv& env, int agent) {
  const rlx::ObsRow row = env.observation(agent);
  return std::vector<float>(row.floats, row.floats + SimpleSpreadWorld::kObservationSize);
}

// Agents at rest on the three landmarks, far from one another.
SimpleSpreadWorld agents_on_landmarks() {
  SimpleSpreadWorld world;
  world.landmark_pos = {SpreadVec{-0.6, -0.5}, SpreadVec{0.7, -0.4}, SpreadVec{0.1, 0.8}};
  world.agent_pos = world.landmark_pos;
  return world;
}

}  // namespace

TEST_CASE("SimpleSpread-v0 is registered with 3 agents, 18 unbounded floats, Discrete(5) and 25 steps", "[envs][multi_agent]") {
  const rlx::MultiAgentEnvSpec spec = rlx::global_env_registry().multi_agent_spec("SimpleSpread-v0");
  REQUIRE(spec.agents.size() == 3);
  const float inf = std::numeric_limits<float>::infinity();
  for (int i = 0; i < 3; ++i) {
    const rlx::AgentSpec& agent = spec.agents[static_cast<size_t>(i)];
    CHECK(agent.id == "agent_" + std::to_string(i));
    CHECK(agent.observation_space == rlx::Space::box({18}, -inf, inf));
    CHECK(agent.action_space == rlx::Space::discrete(5));
    CHECK_FALSE(agent.action_mask);
  }
  CHECK(spec.max_episode_steps == 25);
  CHECK(spec == SimpleSpreadEnv::default_spec());
  auto env = rlx::global_env_registry().make_multi_agent("SimpleSpread-v0");
  CHECK(env->num_agents() == 3);
}

TEST_CASE("SimpleSpread-v0: a seed fixes the start, everyone starts at rest in [-1, 1]^2 and everyone acts", "[envs][multi_agent]") {
  SimpleSpreadEnv first, second, other;
  first.reset(7);
  second.reset(7);
  other.reset(8);
  CHECK(first.acting() == std::vector<int>{0, 1, 2});
  for (int agent = 0; agent < kAgents; ++agent) {
    CHECK(observation_of(first, agent) == observation_of(second, agent));
    CHECK(observation_of(first, agent) != observation_of(other, agent));
  }
  const SimpleSpreadWorld& world = first.world();
  for (int i = 0; i < kAgents; ++i) {
    CHECK(std::abs(world.agent_pos[i].x) <= 1.0);
    CHECK(std::abs(world.agent_pos[i].y) <= 1.0);
    CHECK(world.agent_vel[i].x == 0.0);
    CHECK(world.agent_vel[i].y == 0.0);
    CHECK(std::abs(world.landmark_pos[i].x) <= 1.0);
    CHECK(std::abs(world.landmark_pos[i].y) <= 1.0);
  }

  SECTION("agent_1 sees its velocity, position, landmarks, the others relative to it, then silence") {
    const std::vector<float> obs = observation_of(first, 1);
    const SpreadVec self = world.agent_pos[1];
    CHECK(obs[0] == 0.0f);
    CHECK(obs[1] == 0.0f);
    CHECK(obs[2] == Approx(self.x));
    CHECK(obs[3] == Approx(self.y));
    for (int l = 0; l < 3; ++l) {
      CHECK(obs[4 + 2 * l] == Approx(world.landmark_pos[l].x - self.x));
      CHECK(obs[5 + 2 * l] == Approx(world.landmark_pos[l].y - self.y));
    }
    CHECK(obs[10] == Approx(world.agent_pos[0].x - self.x));  // agent_0
    CHECK(obs[11] == Approx(world.agent_pos[0].y - self.y));
    CHECK(obs[12] == Approx(world.agent_pos[2].x - self.x));  // agent_2
    CHECK(obs[13] == Approx(world.agent_pos[2].y - self.y));
    for (int k = 14; k < 18; ++k) CHECK(obs[k] == 0.0f);
  }
}

TEST_CASE("SimpleSpread-v0: a no-op keeps resting agents still, and 'right' gives v = 5 * 0.1 then 25% damping", "[envs][multi_agent]") {
  SimpleSpreadEnv env;
  env.reset(3);
  env.set_world(agents_on_landmarks());
  const SimpleSpreadWorld before = env.world();

  env.step(actions_of(kNoOps));
  for (int i = 0; i < kAgents; ++i) {
    CHECK(env.world().agent_pos[i].x == Approx(before.agent_pos[i].x).margin(1e-12));
    CHECK(env.world().agent_pos[i].y == Approx(before.agent_pos[i].y).margin(1e-12));
    CHECK(env.world().agent_vel[i].x == Approx(0.0).margin(1e-12));
    CHECK(env.world().agent_vel[i].y == Approx(0.0).margin(1e-12));
  }

  env.step(actions_of({2, 3, 4}));  // agent_0 right, agent_1 down, agent_2 up
  const SimpleSpreadWorld& after = env.world();
  CHECK(after.agent_vel[0].x == Approx(0.5));  // accel 5 * dt 0.1, from rest
  CHECK(after.agent_vel[0].y == Approx(0.0).margin(1e-12));
  CHECK(after.agent_pos[0].x - before.agent_pos[0].x == Approx(0.05));  // semi-implicit: v * dt
  CHECK(after.agent_vel[1].y == Approx(-0.5));
  CHECK(after.agent_vel[2].y == Approx(0.5));
  CHECK(after.agent_pos[2].y - before.agent_pos[2].y == Approx(0.05));
  CHECK(observation_of(env, 0)[0] == Approx(0.5f));
  CHECK(observation_of(env, 0)[2] == Approx(static_cast<float>(before.agent_pos[0].x + 0.05)));

  env.step(actions_of({0, 1, 0}));  // agent_0 coasts: 0.5 * (1 - 0.25); agent_1 turns left
  CHECK(env.world().agent_vel[0].x == Approx(0.375));
  CHECK(env.world().agent_pos[0].x - before.agent_pos[0].x == Approx(0.05 + 0.0375));
  CHECK(env.world().agent_vel[1].x == Approx(-0.5));
  CHECK(env.world().agent_vel[1].y == Approx(-0.375));
}

TEST_CASE("SimpleSpread-v0: overlapping agents push each other apart, equally and oppositely", "[envs][multi_agent]") {
  SimpleSpreadWorld world = agents_on_landmarks();
  world.agent_pos[0] = SpreadVec{0.0, 0.0};
  world.agent_pos[1] = SpreadVec{0.1, 0.0};  // 0.1 apart: 0.2 inside the 0.3 contact distance
  world.step({0, 0, 0});
  // penetration ~ 0.2, so force ~ 100 * 0.2 = 20 and v ~ 20 * 0.1 = 2 along x.
  CHECK(world.agent_vel[0].x == Approx(-2.0).epsilon(1e-3));
  CHECK(world.agent_vel[1].x == Approx(-world.agent_vel[0].x));
  CHECK(world.agent_vel[0].y == Approx(0.0).margin(1e-12));
  CHECK(world.agent_pos[1].x - world.agent_pos[0].x > 0.3);
  CHECK(world.agent_vel[2].x == Approx(0.0).margin(1e-12));  // far away: untouched
}

TEST_CASE("SimpleSpread-v0 rewards: minus the distance of each landmark to its nearest agent, -1 per overlap", "[envs][multi_agent]") {
  SECTION("agents on the landmarks: global 0, and 0 for each after a no-op step") {
    const SimpleSpreadWorld world = agents_on_landmarks();
    CHECK(world.global_reward() == Approx(0.0).margin(1e-12));
    SimpleSpreadEnv env;
    env.reset(1);
    env.set_world(world);
    env.step(actions_of(kNoOps));
    for (int i = 0; i < kAgents; ++i) CHECK(env.outcome(i).reward == Approx(0.0).margin(1e-9));
  }
  SECTION("a far landmark counts its nearest agent only") {
    SimpleSpreadWorld world;
    world.agent_pos = {SpreadVec{0.0, 0.0}, SpreadVec{1.0, 0.0}, SpreadVec{0.0, 1.0}};
    world.landmark_pos = {SpreadVec{0.0, 0.0}, SpreadVec{1.0, 0.0}, SpreadVec{3.0, 4.0}};
    CHECK(world.global_reward() == Approx(-std::sqrt(18.0)));  // (3, 4) is nearest to (0, 1)
    for (int i = 0; i < kAgents; ++i) CHECK(world.local_reward(i) == 0.0);
  }
  SECTION("two overlapping agents get -1 each, the third none; collisions need less than 0.3") {
    SimpleSpreadWorld world = agents_on_landmarks();
    world.agent_pos[1] = SpreadVec{world.agent_pos[0].x + 0.29, world.agent_pos[0].y};
    CHECK(world.local_reward(0) == -1.0);
    CHECK(world.local_reward(1) == -1.0);
    CHECK(world.local_reward(2) == 0.0);
    CHECK(world.reward(0) == Approx(0.5 * world.global_reward() - 0.5));
    CHECK(world.reward(2) == Approx(0.5 * world.global_reward()));
    world.agent_pos[1].x = world.agent_pos[0].x + 0.3 + 1e-9;
    CHECK(world.local_reward(0) == 0.0);
  }
  SECTION("in the env, agents that end a step overlapping are penalised: 0.5 * 0 + 0.5 * -1") {
    // agent_0 and agent_1 fly at each other from 0.4 apart and end the step 0.05 apart, each on a
    // landmark; agent_2 rests on the third landmark.
    SimpleSpreadWorld world;
    world.agent_pos = {SpreadVec{-0.2, 0.0}, SpreadVec{0.2, 0.0}, SpreadVec{0.0, 0.9}};
    world.agent_vel = {SpreadVec{3.0, 0.0}, SpreadVec{-3.0, 0.0}, SpreadVec{}};
    world.landmark_pos = {SpreadVec{0.025, 0.0}, SpreadVec{-0.025, 0.0}, SpreadVec{0.0, 0.9}};
    SimpleSpreadEnv env;
    env.reset(1);
    env.set_world(world);
    env.step(actions_of(kNoOps));
    REQUIRE(env.world().agent_pos[0].x == Approx(0.025));  // 3 * 0.75 * 0.1 = 0.225 to the right
    CHECK(env.outcome(0).reward == Approx(-0.5));
    CHECK(env.outcome(1).reward == Approx(-0.5));
    CHECK(env.outcome(2).reward == Approx(0.0).margin(1e-9));
  }
}

TEST_CASE("SimpleSpread-v0: every episode is truncated after 25 steps, none terminates", "[envs][multi_agent]") {
  SimpleSpreadEnv env;
  rlx::Rng policy(11);
  for (uint64_t seed = 0; seed < 3; ++seed) {
    env.reset(seed);
    for (int t = 1; t <= 25; ++t) {
      REQUIRE_FALSE(env.episode_done());
      REQUIRE(env.acting() == std::vector<int>{0, 1, 2});
      std::vector<int> moves;
      for (int i = 0; i < kAgents; ++i) moves.push_back(static_cast<int>(policy.uniform_int(5)));
      env.step(actions_of(moves));
      for (int i = 0; i < kAgents; ++i) {
        INFO("seed " << seed << ", step " << t << ", agent " << i);
        CHECK_FALSE(env.outcome(i).terminated);
        CHECK(env.outcome(i).observed);
        CHECK(env.outcome(i).truncated == (t == 25));
      }
    }
    CHECK(env.episode_done());
    CHECK(env.elapsed_steps() == 25);
    CHECK(env.acting().empty());
  }
}

TEST_CASE("SimpleSpread-v0 refuses an action outside Discrete(5)", "[envs][multi_agent]") {
  SimpleSpreadEnv env;
  env.reset(0);
  REQUIRE_THROWS_WITH(env.step(actions_of({0, 5, 0})), Catch::Contains("action must be in [0, 5)") && Catch::Contains("got 5"));
}

TEST_CASE("SimpleSpread-v0 baseline: a uniformly random policy's summed reward per env step", "[envs][multi_agent]") {
  // Summed over the 3 agents and averaged over every env step of 200 seeded episodes (seeds
  // 0..199, actions from Rng(2024)); measured -3.215 (-80.4 per episode). The sum is
  // 1.5 * global + 0.5 * (sum of local terms): scattered over [-1, 1]^2, a landmark's nearest agent
  // is ~0.7 away (-2.12 summed); pairs rarely end a step overlapping (0.03 per step), since the
  // contact force pushes an overlapping pair apart within one step.
  SimpleSpreadEnv env;
  rlx::Rng policy(2024);
  double total = 0.0, global = 0.0, overlaps = 0.0;
  long steps = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    env.reset(seed);
    while (!env.episode_done()) {
      std::vector<int> moves;
      for (int i = 0; i < kAgents; ++i) moves.push_back(static_cast<int>(policy.uniform_int(5)));
      env.step(actions_of(moves));
      for (int i = 0; i < kAgents; ++i) {
        total += env.outcome(i).reward;
        overlaps -= env.world().local_reward(i) / 2.0;  // each overlapping pair counts twice
      }
      global += env.world().global_reward();
      ++steps;
    }
  }
  REQUIRE(steps == 200 * 25);
  const double per_step = total / static_cast<double>(steps);
  const double global_per_step = global / static_cast<double>(steps);
  const double overlaps_per_step = overlaps / static_cast<double>(steps);
  WARN("SimpleSpread-v0 random policy: mean summed reward per env step = " << per_step << " (per episode: " << per_step * 25
                                                                           << "); global term " << global_per_step
                                                                           << ", overlapping pairs " << overlaps_per_step);
  CHECK(per_step == Approx(1.5 * global_per_step - overlaps_per_step));
  CHECK(per_step < -2.8);
  CHECK(per_step > -3.6);
  CHECK(global_per_step < -1.6);
  CHECK(global_per_step > -2.4);
  CHECK(overlaps_per_step > 0.01);
  CHECK(overlaps_per_step < 0.1);
}
