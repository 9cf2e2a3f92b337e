#include "envs/python/python_multi_agent_env.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/config_error.h"
#include "envs/python/python_actions.h"
#include "envs/python/python_gil.h"
#include "envs/python/python_observation.h"
#include "envs/python/python_spaces.h"
#include "envs/python/python_values.h"

namespace rlx::python_bridge {
namespace {

// The key of RLlib's entry that ends every agent at once.
constexpr const char* kAllAgents = "__all__";

// One of the env's agents as the bridge reads it.
struct PythonAgent {
  py::object key;                        // the agent's id as the env's dicts hold it
  PythonSpace observation;               // without RLlib's mask
  std::optional<ObservationMask> mask;   // RLlib's / PettingZoo's mask in the observation's dict
  bool float64_actions = false;          // a Box of float64 actions, else float32
};

// The agent's observation_space or action_space (`kind`): RLlib's dict (observation_spaces[key]),
// PettingZoo's method (observation_space(key)) or a Dict space keyed by agent. Needs the GIL.
py::object agent_space(const std::string& env_id, py::handle env, const py::object& key, const std::string& kind) {
  const std::string plural = kind + "_spaces";
  const std::string single = kind + "_space";
  const std::string agent = describe(key);
  try {
    if (py::hasattr(env, plural.c_str()) && py::isinstance<py::dict>(env.attr(plural.c_str()))) {
      const py::dict spaces = env.attr(plural.c_str());
      if (!spaces.contains(key)) throw ConfigError(env_id + ": " + plural + " has no entry for agent '" + agent + "'");
      return spaces[key];
    }
    if (!py::hasattr(env, single.c_str())) {
      throw ConfigError(env_id + ": a multi-agent env needs " + single + "(agent) (PettingZoo) or a " + plural + " dict (RLlib)");
    }
    const py::object found = env.attr(single.c_str());
    if (PyCallable_Check(found.ptr())) return found(key);
    if (py::hasattr(found, "spaces") && py::isinstance<py::dict>(found.attr("spaces")) && found.attr("spaces").contains(key)) {
      return found.attr("spaces")[key];
    }
    throw ConfigError(env_id + ": " + single + " is " + describe_value(found) + ", neither a method taking the agent nor a Dict keyed by agent");
  } catch (py::error_already_set& error) {
    throw python_error(env_id + ": " + single + " of agent '" + agent + "'", error);
  }
}

class PythonMultiAgentEnv final : public MultiAgentEnv {
 public:
  PythonMultiAgentEnv(MultiAgentEnvSpec spec, py::object env, std::vector<PythonAgent> agents)
      : MultiAgentEnv(std::move(spec)), env_(std::move(env)), reset_(env_.attr("reset")), step_(env_.attr("step")), agents_(std::move(agents)) {
    for (size_t i = 0; i < agents_.size(); ++i) {
      index_[agents_[i].key] = py::int_(i);
      readers_.push_back(std::make_unique<ObservationReader>(agents_[i].observation, spec_of(i).observation_space,
                                                             observation_layout(static_cast<int>(i)), agents_[i].mask));
    }
  }

  ~PythonMultiAgentEnv() override {
    const GilLock gil;
    close_from_destructor(env_);
    readers_.clear();
    agents_.clear();
    index_ = py::object();
    reset_ = py::object();
    step_ = py::object();
    env_ = py::object();
  }

 protected:
  void reset_episode(Rng& /*the Python env seeds its own*/, MultiAgentOutput& out) override {
    const GilLock gil;
    const py::object result = call("reset", [&] {
      return reset_(py::arg("seed") = reset_seed() ? py::object(py::int_(*reset_seed())) : py::object(py::none()));
    });
    if (!PyTuple_Check(result.ptr()) || PyTuple_GET_SIZE(result.ptr()) != 2) {
      throw output_error("reset", "return value", "is " + describe_value(result) + ", expected a tuple (observations, infos)");
    }
    write_observations("reset", PyTuple_GET_ITEM(result.ptr(), 0), out);
  }

  void step_episode(const std::vector<AgentAction>& actions, MultiAgentOutput& out) override {
    const GilLock gil;
    py::dict argument;
    for (const AgentAction& action : actions) {
      const PythonAgent& agent = agents_[static_cast<size_t>(action.agent)];
      argument[agent.key] = python_action(spec_of(static_cast<size_t>(action.agent)).action_space, agent.float64_actions, action.action);
    }
    const py::object result = call("step", [&] { return step_(argument); });
    if (!PyTuple_Check(result.ptr()) || PyTuple_GET_SIZE(result.ptr()) != 5) {
      throw output_error("step", "return value", "is " + describe_value(result) +
                                                   ", expected a tuple (observations, rewards, terminations, truncations, infos)");
    }
    write_observations("step", PyTuple_GET_ITEM(result.ptr(), 0), out);
    for (const auto& [key, reward] : as_dict("step", "rewards", PyTuple_GET_ITEM(result.ptr(), 1))) {
      const int agent = agent_of("rewards", key);
      const double value = PyFloat_AsDouble(reward.ptr());
      if (value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw output_error("step", field("rewards", key), "is " + describe_value(reward) + ", expected a number");
      }
      out.add_reward(agent, value);
    }
    end_agents(PyTuple_GET_ITEM(result.ptr(), 2), "terminations", out, &MultiAgentOutput::terminate);
    end_agents(PyTuple_GET_ITEM(result.ptr(), 3), "truncations", out, &MultiAgentOutput::truncate);
  }

 private:
  const AgentSpec& spec_of(size_t agent) const { return spec().agents[agent]; }

  template <typename Call>
  py::object call(const char* method, Call&& body) {
    try {
      return body();
    } catch (py::error_already_set& error) {
      throw python_error(spec().id + ": " + method, error);
    }
  }

  EnvOutputError output_error(const char* method, const std::string& what_field, const std::string& what) const {
    return EnvOutputError(spec().id, method, std::string(method) == "step" ? elapsed_steps() + 1 : 0, what_field, what);
  }
  static std::string field(const char* dict, py::handle key) { return std::string(dict) + "[" + describe(py::repr(key)) + "]"; }

  py::dict as_dict(const char* method, const char* name, PyObject* value) const {
    if (!PyDict_Check(value)) throw output_error(method, name, "is " + describe_value(value) + ", expected a dict keyed by agent");
    return py::reinterpret_borrow<py::dict>(value);
  }

  // The agent index of a key of `dict`; an EnvOutputError naming the key when no agent has it.
  int agent_of(const char* dict, py::handle key) const {
    if (!index_.contains(key)) {
      throw output_error(current_method(), field(dict, key), "is for an agent not among possible_agents " + describe(possible_agents()));
    }
    return index_[key].cast<int>();
  }
  const char* current_method() const { return in_reset_ ? "reset" : "step"; }
  py::object possible_agents() const { return env_.attr("possible_agents"); }

  void write_observations(const char* method, PyObject* observations, MultiAgentOutput& out) {
    in_reset_ = std::string(method) == "reset";
    for (const auto& [key, value] : as_dict(method, "observations", observations)) {
      const int agent = agent_of("observations", key);
      std::optional<ObservationProblem> problem;
      try {
        problem = readers_[static_cast<size_t>(agent)]->write(value.ptr(), out.observe(agent));
      } catch (py::error_already_set& error) {
        throw python_error(spec().id + ": " + method + ": reading the observation of agent '" + spec_of(static_cast<size_t>(agent)).id + "'", error);
      }
      if (problem) throw output_error(method, field("observations", key) + " " + problem->field, problem->what);
    }
  }

  // Ends each agent whose entry in `dict` is true with `end`; "__all__" ends every agent still
  // in the episode that this step has not ended.
  void end_agents(PyObject* value, const char* dict, MultiAgentOutput& out, void (MultiAgentOutput::*end)(int)) {
    bool all = false;
    std::set<int> ended;
    for (const auto& [key, flag] : as_dict("step", dict, value)) {
      const int truth = PyObject_IsTrue(flag.ptr());
      if (truth < 0) {
        PyErr_Clear();
        throw output_error("step", field(dict, key), "is " + describe_value(flag) + ", expected a bool");
      }
      if (py::isinstance<py::str>(key) && key.cast<std::string>() == kAllAgents && !index_.contains(key)) {
        all = truth != 0;
        continue;
      }
      const int agent = agent_of(dict, key);
      if (truth) {
        (out.*end)(agent);
        ended.insert(agent);
      }
    }
    if (!all) return;
    for (int agent = 0; agent < num_agents(); ++agent) {
      if (agent_entered(agent) && !out.done(agent) && !ended.count(agent)) (out.*end)(agent);
    }
  }

  py::object env_, reset_, step_;
  std::vector<PythonAgent> agents_;
  py::object index_ = py::dict();  // agent key -> its index (a dict)
  std::vector<std::unique_ptr<ObservationReader>> readers_;
  bool in_reset_ = false;
};

}  // namespace

bool is_multi_agent(py::handle env) { return py::hasattr(env, "possible_agents"); }

std::unique_ptr<MultiAgentEnv> wrap_multi_agent(const std::string& env_id, py::object env) {
  py::list keys;
  try {
    keys = py::list(env.attr("possible_agents"));
  } catch (py::error_already_set& error) {
    throw python_error(env_id + ": possible_agents", error);
  }
  MultiAgentEnvSpec spec;
  spec.id = env_id;
  std::vector<PythonAgent> agents;
  for (const py::handle key : keys) {
    PythonAgent agent;
    agent.key = py::reinterpret_borrow<py::object>(key);
    const std::string id = describe(key);
    const std::string who = env_id + ", agent '" + id + "'";
    agent.observation = read_space_object(who, agent_space(env_id, env, agent.key, "observation"), "observation_space");
    const PythonSpace action = read_space_object(who, agent_space(env_id, env, agent.key, "action"), "action_space");
    check_action_dtype(who, action);
    agent.float64_actions = action.dtype == "float64";
    agent.mask = take_observation_mask(who, agent.observation, action.space);
    spec.agents.push_back(AgentSpec{id, agent.observation.space, action.space, agent.mask.has_value()});
    agents.push_back(std::move(agent));
  }
  const py::object limit = spec_field(env, "max_episode_steps");
  if (!limit.is_none()) {
    if (!PyIndex_Check(limit.ptr()) || limit.cast<int64_t>() < 0) {
      throw ConfigError(env_id + ": max_episode_steps is " + describe_value(limit) + ", expected a non-negative integer");
    }
    spec.max_episode_steps = limit.cast<int>();
  }
  try {
    spec.validate();
  } catch (const std::invalid_argument& error) {
    throw ConfigError(error.what());
  }
  return std::make_unique<PythonMultiAgentEnv>(std::move(spec), std::move(env), std::move(agents));
}

}  // namespace rlx::python_bridge
