#include "envs/registry.h"

#include <stdexcept>

#include "core/config_error.h"
#include "core/did_you_mean.h"
#include "envs/classic/classic_control.h"
#include "envs/minatar/minatar_env.h"
#include "envs/mujoco/mujoco_envs.h"
#include "envs/multi_agent/multi_agent_envs.h"
#include "envs/toy/toy_envs.h"

namespace rlx {

void EnvRegistry::check_new_id(const std::string& id, bool has_factory) const {
  if (id.empty()) throw std::invalid_argument("cannot register an environment with an empty id");
  if (!has_factory) throw std::invalid_argument("environment '" + id + "' was registered without a factory");
  if (contains(id)) throw std::invalid_argument("environment id '" + id + "' is already registered");
}

void EnvRegistry::add(const EnvSpec& spec, EnvFactory factory) {
  check_new_id(spec.id, static_cast<bool>(factory));
  spec.validate();
  // Every instance must carry the spec it was registered with: workers, learners and
  // checkpoints size everything from the registered spec.
  EnvFactory checked = [spec, factory = std::move(factory)]() {
    std::unique_ptr<Env> env = factory();
    if (!env) throw std::runtime_error("the factory of environment '" + spec.id + "' returned no environment");
    if (env->spec() != spec) {
      throw EnvContractError(spec.id, "environment '" + spec.id +
                                          "': an instance's spec differs from the registered one\n  registered: " +
                                          spec.to_string() + "\n  instance:   " + env->spec().to_string());
    }
    return env;
  };
  entries_.emplace(spec.id, Entry{spec, std::move(checked)});
}

void EnvRegistry::add_multi_agent(const MultiAgentEnvSpec& spec, MultiAgentEnvFactory factory) {
  check_new_id(spec.id, static_cast<bool>(factory));
  spec.validate();
  MultiAgentEnvFactory checked = [spec, factory = std::move(factory)]() {
    std::unique_ptr<MultiAgentEnv> env = factory();
    if (!env) throw std::runtime_error("the factory of environment '" + spec.id + "' returned no environment");
    if (env->spec() != spec) {
      throw EnvContractError(spec.id, "environment '" + spec.id + "': an instance's spec differs from the registered one");
    }
    return env;
  };
  multi_agent_entries_.emplace(spec.id, MultiAgentEntry{spec, std::move(checked)});
}

bool EnvRegistry::contains(const std::string& id) const { return entries_.count(id) > 0 || multi_agent_entries_.count(id) > 0; }

std::optional<EnvSpec> EnvRegistry::find(const std::string& id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.spec;
}

const EnvRegistry::Entry& EnvRegistry::entry(const std::string& id) const {
  auto it = entries_.find(id);
  if (it != entries_.end()) return it->second;
  throw_unknown(id, ids(), multi_agent_entries_.count(id) ? "single-agent " : "");
}

const EnvRegistry::MultiAgentEntry& EnvRegistry::multi_agent_entry(const std::string& id) const {
  auto it = multi_agent_entries_.find(id);
  if (it != multi_agent_entries_.end()) return it->second;
  throw_unknown(id, multi_agent_ids(), "multi-agent ");
}

void EnvRegistry::throw_unknown(const std::string& id, const std::vector<std::string>& known, const std::string& kind) const {
  std::string message = "unknown " + kind + "environment id '" + id + "'";
  if (contains(id)) {
    message = "environment '" + id + "' is " + (entries_.count(id) ? "single-agent" : "multi-agent") + ", not " +
              (kind == "multi-agent " ? "multi-agent" : "single-agent") + " as this needs";
  } else if (const auto suggestion = closest_match(id, known)) {
    message += "; did you mean '" + *suggestion + "'?";
  }
  std::string listed;
  for (const std::string& name : known) listed += (listed.empty() ? "" : ", ") + name;
  message += "\n  known " + kind + "ids: " + listed +
             "\n  an env from a plugin needs the plugin loaded: --env-plugin PATH, or plugins: [PATH] in the experiment file";
  throw UnknownEnvError(message);
}

const EnvSpec& EnvRegistry::spec(const std::string& id) const { return entry(id).spec; }

const EnvFactory& EnvRegistry::factory(const std::string& id) const { return entry(id).factory; }

std::unique_ptr<Env> EnvRegistry::make(const std::string& id) const { return entry(id).factory(); }

std::vector<std::string> EnvRegistry::ids() const {
  std::vector<std::string> result;
  result.reserve(entries_.size());
  for (const auto& [name, unused] : entries_) result.push_back(name);
  return result;
}

std::optional<MultiAgentEnvSpec> EnvRegistry::find_multi_agent(const std::string& id) const {
  auto it = multi_agent_entries_.find(id);
  if (it == multi_agent_entries_.end()) return std::nullopt;
  return it->second.spec;
}

const MultiAgentEnvSpec& EnvRegistry::multi_agent_spec(const std::string& id) const { return multi_agent_entry(id).spec; }

std::unique_ptr<MultiAgentEnv> EnvRegistry::make_multi_agent(const std::string& id) const { return multi_agent_entry(id).factory(); }

std::vector<std::string> EnvRegistry::multi_agent_ids() const {
  std::vector<std::string> result;
  for (const auto& [name, unused] : multi_agent_entries_) result.push_back(name);
  return result;
}

void register_builtin_envs(EnvRegistrar& registrar) {
  register_classic_control(registrar);
  register_mujoco_envs(registrar);
  register_minatar_envs(registrar);
  register_toy_envs(registrar);
  register_multi_agent_envs(registrar);
}

EnvRegistry& global_env_registry() {
  static EnvRegistry registry = [] {
    EnvRegistry built;
    register_builtin_envs(built);
    return built;
  }();
  return registry;
}

}  // namespace rlx
