// MultiAgentOutput: what a multi-agent env's hooks write one reset or step into (observations,
// rewards, terminations and truncations per agent), checked as it is written. Part of the plugin
// API (header only); envs/multi_agent/multi_agent_env.h explains the contract.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "envs/env.h"
#include "envs/multi_agent/multi_agent_spec.h"

namespace rlx {

// What one reset or step gave one agent.
struct AgentOutcome {
  double reward = 0.0;      // the rewards of this call (a step's rewards reach the agent that earned them)
  bool terminated = false;  // the agent reached a terminal state this call: do not bootstrap
  bool truncated = false;   // the agent was cut off this call (time limit or env): bootstrap
  bool observed = false;    // the env wrote the agent a new observation this call
};

// The per-agent buffers a reset or step writes into. Throws EnvContractError naming the env, the
// call and the agent when a hook breaks the contract: an agent index outside the spec, an agent
// observed twice in one call, anything written for an agent whose episode already ended, or a
// reward, termination or truncation written at reset.
class MultiAgentOutput {
 public:
  explicit MultiAgentOutput(const MultiAgentEnvSpec& spec) : spec_(spec) {
    for (size_t i = 0; i < spec.agents.size(); ++i) writers_.push_back(std::make_unique<ObservationWriter>(spec.agent_env_spec(static_cast<int>(i))));
    outcomes_.resize(spec.agents.size());
    done_.assign(spec.agents.size(), false);
  }

  // Starts the agent's observation of this call (it acts next unless it is done this call) and
  // hands out its buffers, bounds-checked as a single-agent env's.
  ObsSpan observe(int agent) {
    check_live(agent, "an observation");
    AgentOutcome& outcome = outcomes_[static_cast<size_t>(agent)];
    if (outcome.observed) throw contract_error(agent_name(agent) + " was observed twice in one " + call_);
    outcome.observed = true;
    last_observed_ = agent;
    return writers_[static_cast<size_t>(agent)]->begin();
  }
  // Adds a reward for the agent (several calls add up).
  void add_reward(int agent, double reward) {
    check_live(agent, "a reward");
    check_in_step(agent, "a reward");
    outcomes_[static_cast<size_t>(agent)].reward += reward;
  }
  // Ends the agent's episode in a terminal state.
  void terminate(int agent) {
    check_live(agent, "a termination");
    check_in_step(agent, "a termination");
    outcomes_[static_cast<size_t>(agent)].terminated = true;
  }
  // Ends the agent's episode by cutting it off (it may be bootstrapped from its last observation).
  void truncate(int agent) {
    check_live(agent, "a truncation");
    check_in_step(agent, "a truncation");
    outcomes_[static_cast<size_t>(agent)].truncated = true;
  }

  // The env's agents, for hooks that loop over them.
  int num_agents() const { return static_cast<int>(spec_.agents.size()); }
  // True when the agent's episode ended in an earlier call.
  bool done(int agent) const { return done_.at(static_cast<size_t>(agent)); }

 private:
  friend class MultiAgentEnv;

  std::string agent_name(int agent) const { return "agent '" + spec_.agents[static_cast<size_t>(agent)].id + "'"; }
  EnvContractError contract_error(const std::string& what) const {
    return EnvContractError(spec_.id, spec_.id + ": " + call_ + " (episode step " + std::to_string(step_) + "): " + what);
  }
  void check_index(int agent) const {
    if (agent < 0 || agent >= num_agents()) {
      throw contract_error("agent index " + std::to_string(agent) + " is outside the " + std::to_string(num_agents()) +
                           " agents of the spec");
    }
  }
  void check_live(int agent, const char* what) const {
    check_index(agent);
    if (done_[static_cast<size_t>(agent)]) {
      throw contract_error(std::string(what) + " for " + agent_name(agent) + ", whose episode already ended");
    }
  }
  void check_in_step(int agent, const char* what) const {
    if (call_ == "reset") throw contract_error(std::string(what) + " for " + agent_name(agent) + " at reset (rewards and ends come with steps)");
  }

  // Clears this call's outcomes (the MultiAgentEnv calls it before each hook).
  void begin(const char* call, int step) {
    call_ = call;
    step_ = step;
    for (AgentOutcome& outcome : outcomes_) outcome = AgentOutcome{};
  }

  const MultiAgentEnvSpec& spec_;
  std::vector<std::unique_ptr<ObservationWriter>> writers_;  // one per agent, for its own spaces
  std::vector<AgentOutcome> outcomes_;
  std::vector<bool> done_;  // the agent's episode ended (terminated or truncated)
  std::string call_ = "reset";
  int step_ = 0;
  int last_observed_ = -1;  // the agent whose span the hook was given last
};

}  // namespace rlx
