// EnvRegistry: env ids -> specs and factories, single- and multi-agent; built-ins plus whatever
// plugins add.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "envs/env.h"
#include "envs/multi_agent/multi_agent_env.h"

namespace rlx {

// An env id that no registered environment has: a user's input error (exit status 2). The
// message suggests the closest id and how to load a plugin.
class UnknownEnvError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// Makes a fresh environment instance.
using EnvFactory = std::function<std::unique_ptr<Env>()>;
// Makes a fresh multi-agent environment instance.
using MultiAgentEnvFactory = std::function<std::unique_ptr<MultiAgentEnv>()>;

// The interface a plugin's registration function receives (kept abstract so a plugin
// needs only headers, never rlx's libraries).
class EnvRegistrar {
 public:
  virtual ~EnvRegistrar() = default;
  // Adds an env id; throws std::invalid_argument if the id is taken or the spec is malformed.
  virtual void add(const EnvSpec& spec, EnvFactory factory) = 0;
  // Adds a multi-agent env id (ids are unique across single- and multi-agent envs); throws
  // std::invalid_argument if the id is taken or the spec is malformed.
  virtual void add_multi_agent(const MultiAgentEnvSpec& spec, MultiAgentEnvFactory factory) = 0;
};

// A set of registered environments.
class EnvRegistry : public EnvRegistrar {
 public:
  void add(const EnvSpec& spec, EnvFactory factory) override;
  void add_multi_agent(const MultiAgentEnvSpec& spec, MultiAgentEnvFactory factory) override;

  // True when the id is registered (single- or multi-agent).
  bool contains(const std::string& id) const;
  // The spec of a registered id; std::nullopt when unknown.
  std::optional<EnvSpec> find(const std::string& id) const;
  // The spec of a registered id; throws UnknownEnvError (did-you-mean, known ids, plugin hint) when unknown.
  const EnvSpec& spec(const std::string& id) const;
  // A new instance of the env; throws UnknownEnvError when unknown, EnvContractError when the
  // instance's spec differs from the registered one (every factory() call checks that).
  std::unique_ptr<Env> make(const std::string& id) const;
  // The factory of a registered id; throws like make().
  const EnvFactory& factory(const std::string& id) const;
  // All single-agent ids in sorted order.
  std::vector<std::string> ids() const;

  // The spec of a registered multi-agent id; std::nullopt when unknown.
  std::optional<MultiAgentEnvSpec> find_multi_agent(const std::string& id) const;
  // The spec of a registered multi-agent id; throws UnknownEnvError when unknown.
  const MultiAgentEnvSpec& multi_agent_spec(const std::string& id) const;
  // A new instance of the multi-agent env; throws UnknownEnvError when unknown, EnvContractError
  // when the instance's spec differs from the registered one.
  std::unique_ptr<MultiAgentEnv> make_multi_agent(const std::string& id) const;
  // All multi-agent ids in sorted order.
  std::vector<std::string> multi_agent_ids() const;

 private:
  struct Entry {
    EnvSpec spec;
    EnvFactory factory;
  };
  struct MultiAgentEntry {
    MultiAgentEnvSpec spec;
    MultiAgentEnvFactory factory;
  };
  // Throws std::invalid_argument when id is empty or taken, or there is no factory.
  void check_new_id(const std::string& id, bool has_factory) const;
  const Entry& entry(const std::string& id) const;
  const MultiAgentEntry& multi_agent_entry(const std::string& id) const;
  // The UnknownEnvError for an id: the closest known id, the known ids, how to load a plugin.
  [[noreturn]] void throw_unknown(const std::string& id, const std::vector<std::string>& known, const std::string& kind) const;
  std::map<std::string, Entry> entries_;
  std::map<std::string, MultiAgentEntry> multi_agent_entries_;
};

// Adds every built-in environment (classic control, MuJoCo, MinAtar and the toy envs) to a registry.
void register_builtin_envs(EnvRegistrar& registrar);

// The process-wide registry, holding the built-ins from first use and any loaded plugins.
EnvRegistry& global_env_registry();

}  // namespace rlx
