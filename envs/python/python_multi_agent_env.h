// Python multi-agent envs for the bridge (rlx-python-envs.so), read by duck typing: PettingZoo's
// Parallel API (possible_agents; observation_space(agent) and action_space(agent); reset(seed=)
// -> (observations, infos); step(actions) -> (observations, rewards, terminations, truncations,
// infos), each a dict keyed by agent) and RLlib's MultiAgentEnv (the same dicts, spaces in the
// observation_spaces and action_spaces dicts, "__all__" ending every agent). Neither library is
// needed. Every function needs the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "envs/multi_agent/multi_agent_env.h"

namespace rlx::python_bridge {

namespace py = pybind11;

// True when env has possible_agents: a multi-agent env.
bool is_multi_agent(py::handle env);

// env as an rlx MultiAgentEnv (ids: str() of each of possible_agents); ConfigError naming the env
// and the agent when an agent's spaces cannot be read, an id repeats, or there is no agent.
std::unique_ptr<MultiAgentEnv> wrap_multi_agent(const std::string& env_id, py::object env);

}  // namespace rlx::python_bridge
