#include "envs/registry.h"

#include <stdexcept>

#include "core/config_error.h"
#include "core/did_you_mean.h"
#include "envs/classic/classic_control.h"
#include "envs/minatar/minatar_env.h"
#include "envs/mujoco/mujoco_envs.h"
#include "envs/toy/toy_envs.h"

namespace rlx {

void EnvRegistry::add(const EnvSpec& spec, EnvFactory factory) {
  if (spec.id.empty()) throw std::invalid_argument("cannot register an environment with an empty id");
  if (!factory) throw std::invalid_argument("environment '" + spec.id + "' was registered without a factory");
  spec.validate();
  if (entries_.count(spec.id)) throw std::invalid_argument("environment id '" + spec.id + "' is already registered");
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

bool EnvRegistry::contains(const std::string& id) const { return entries_.count(id) > 0; }

std::optional<EnvSpec> EnvRegistry::find(const std::string& id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.spec;
}

const EnvRegistry::Entry& EnvRegistry::entry(const std::string& id) const {
  auto it = entries_.find(id);
  if (it != entries_.end()) return it->second;
  const std::vector<std::string> known = ids();
  std::string message = "unknown environment id '" + id + "'";
  if (const auto suggestion = closest_match(id, known)) message += "; did you mean '" + *suggestion + "'?";
  std::string listed;
  for (const std::string& name : known) listed += (listed.empty() ? "" : ", ") + name;
  message += "\n  known ids: " + listed +
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

void register_builtin_envs(EnvRegistrar& registrar) {
  register_classic_control(registrar);
  register_mujoco_envs(registrar);
  register_minatar_envs(registrar);
  register_toy_envs(registrar);
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
