// MultiAgentEnvSpec: what a registered multi-agent environment is (its id, its possible agents,
// each with its own spaces, and the episode's time limit). Part of the plugin API (header only).
#pragma once

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env_spec.h"

namespace rlx {

// One possible agent: its id (unique in the env) and its spaces, which may differ between agents.
struct AgentSpec {
  std::string id;             // e.g. "agent_0", "player_1"
  Space observation_space;    // any space (core/space.h)
  Space action_space;         // Box (float32), Discrete, MultiDiscrete or MultiBinary
  bool action_mask = false;   // each observation carries a mask of this agent's legal actions

  bool operator==(const AgentSpec& other) const {
    return id == other.id && observation_space == other.observation_space && action_space == other.action_space &&
           action_mask == other.action_mask;
  }
  bool operator!=(const AgentSpec& other) const { return !(*this == other); }
};

// Static description of a multi-agent environment (RLlib's MultiAgentEnv, PettingZoo's
// possible_agents with per-agent spaces).
struct MultiAgentEnvSpec {
  std::string id;                          // e.g. "MultiAgentCartPole-v0"
  std::vector<AgentSpec> agents;           // every agent that may ever act, in a fixed order
  int max_episode_steps = 0;               // env steps after which every live agent is truncated; 0: none
  std::optional<double> reward_threshold;  // summed return of all agents at which the task counts as solved

  // The agent's position in `agents`; std::nullopt when no agent has that id.
  std::optional<int> agent_index(const std::string& agent_id) const {
    for (size_t i = 0; i < agents.size(); ++i) {
      if (agents[i].id == agent_id) return static_cast<int>(i);
    }
    return std::nullopt;
  }

  // The single-agent view of one agent (id "ENV, agent 'ID'"), for what is built per agent:
  // observation layouts, writers and models. Throws std::out_of_range on a bad index.
  EnvSpec agent_env_spec(int agent) const {
    const AgentSpec& spec = agents.at(static_cast<size_t>(agent));
    EnvSpec view;
    view.id = id + ", agent '" + spec.id + "'";
    view.observation_space = spec.observation_space;
    view.action_space = spec.action_space;
    view.action_mask = spec.action_mask;
    view.max_episode_steps = max_episode_steps;
    return view;
  }

  // Throws std::invalid_argument naming the env (and the agent and space path) when there is no
  // agent, an agent id is empty or repeated, an agent's spaces are malformed or not actable, or the
  // time limit is negative.
  void validate() const {
    const std::string who = "multi-agent environment '" + id + "': ";
    if (agents.empty()) throw std::invalid_argument(who + "has no agents");
    std::set<std::string> seen;
    for (size_t i = 0; i < agents.size(); ++i) {
      if (agents[i].id.empty()) throw std::invalid_argument(who + "agent " + std::to_string(i) + " has an empty id");
      if (!seen.insert(agents[i].id).second) throw std::invalid_argument(who + "agent id '" + agents[i].id + "' is repeated");
      agent_env_spec(static_cast<int>(i)).validate();
    }
    if (max_episode_steps < 0) throw std::invalid_argument(who + "max_episode_steps is negative");
  }

  bool operator==(const MultiAgentEnvSpec& other) const {
    return id == other.id && agents == other.agents && max_episode_steps == other.max_episode_steps &&
           reward_threshold == other.reward_threshold;
  }
  bool operator!=(const MultiAgentEnvSpec& other) const { return !(*this == other); }
};

}  // namespace rlx
