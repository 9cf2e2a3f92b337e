#include "envs/plugin_loader.h"

#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "core/config_error.h"
#include "envs/plugin.h"
#include "envs/shared_library.h"

namespace rlx {
namespace {

// The start of every error message about the plugin at path.
std::string plugin_error(const std::string& path, const std::string& what) {
  return "env plugin '" + path + "': " + what;
}

// The file's canonical path; throws "no such file" when it does not exist.
std::string canonical_plugin_path(const std::string& path) {
  std::error_code error;
  const bool exists = std::filesystem::exists(path, error);
  if (error || !exists) throw EnvPluginError(plugin_error(path, "no such file"));
  const std::filesystem::path canonical = std::filesystem::canonical(path, error);
  if (error) throw EnvPluginError(plugin_error(path, "cannot resolve the path: " + error.message()));
  if (std::filesystem::is_directory(canonical)) {
    throw EnvPluginError(plugin_error(path, "is a directory, not a shared library"));
  }
  return canonical.string();
}

// Collects a plugin's registrations, checking each spec as EnvRegistry does, so that nothing
// reaches the real registrar unless the whole registration succeeds.
class StagingRegistrar : public EnvRegistrar {
 public:
  void add(const EnvSpec& spec, EnvFactory factory) override {
    checker_.add(spec, factory);  // validates the spec and rejects ids repeated within the plugin
    entries_.emplace_back(spec, std::move(factory));
  }
  void add_multi_agent(const MultiAgentEnvSpec& spec, MultiAgentEnvFactory factory) override {
    checker_.add_multi_agent(spec, factory);
    multi_agent_entries_.emplace_back(spec, std::move(factory));
  }
  std::vector<std::pair<EnvSpec, EnvFactory>>& entries() { return entries_; }
  std::vector<std::pair<MultiAgentEnvSpec, MultiAgentEnvFactory>>& multi_agent_entries() { return multi_agent_entries_; }

 private:
  EnvRegistry checker_;
  std::vector<std::pair<EnvSpec, EnvFactory>> entries_;
  std::vector<std::pair<MultiAgentEnvSpec, MultiAgentEnvFactory>> multi_agent_entries_;
};

// Loads the plugin whose canonical path is file (path is how the caller named it).
void load_plugin_file(const std::string& path, const std::string& file, EnvRegistrar& registrar) {
  std::optional<SharedLibrary> library;
  EnvPluginAbiVersionFn abi_version = nullptr;
  EnvPluginRegisterFn register_envs = nullptr;
  try {  // SharedLibrary's errors (cannot load, missing symbol) are the plugin's
    library.emplace("env plugin '" + path + "'", file);
    const std::string hint = " (plugins define it with RLX_ENV_PLUGIN from envs/plugin.h)";
    abi_version = reinterpret_cast<EnvPluginAbiVersionFn>(library->symbol(kEnvPluginAbiVersionSymbol, hint));
    register_envs = reinterpret_cast<EnvPluginRegisterFn>(library->symbol(kEnvPluginRegisterSymbol, hint));
  } catch (const std::runtime_error& error) {
    throw EnvPluginError(error.what());
  }

  const int plugin_version = abi_version();
  if (plugin_version != kEnvPluginAbiVersion) {
    throw EnvPluginError(plugin_error(
        path, "built for env plugin ABI version " + std::to_string(plugin_version) + ", but this rlx uses version " +
                  std::to_string(kEnvPluginAbiVersion) + "; rebuild the plugin against this rlx's headers"));
  }

  StagingRegistrar staged;
  try {
    register_envs(staged);
  } catch (const std::exception& error) {
    throw EnvPluginError(plugin_error(path, std::string("registration failed: ") + error.what()));
  } catch (...) {
    throw EnvPluginError(plugin_error(path, "registration failed with a non-standard exception"));
  }

  // Refuse taken ids before adding any, so a clash leaves an EnvRegistry untouched.
  if (const auto* registry = dynamic_cast<const EnvRegistry*>(&registrar)) {
    std::vector<std::string> ids;
    for (const auto& entry : staged.entries()) ids.push_back(entry.first.id);
    for (const auto& entry : staged.multi_agent_entries()) ids.push_back(entry.first.id);
    for (const std::string& id : ids) {
      if (registry->contains(id)) throw EnvPluginError(plugin_error(path, "environment id '" + id + "' is already registered"));
    }
  }
  try {
    for (auto& [spec, factory] : staged.entries()) registrar.add(spec, std::move(factory));
    for (auto& [spec, factory] : staged.multi_agent_entries()) registrar.add_multi_agent(spec, std::move(factory));
  } catch (const std::exception& error) {
    throw EnvPluginError(plugin_error(path, error.what()));
  }
}

}  // namespace

void load_env_plugin(const std::string& path, EnvRegistrar& registrar) {
  load_plugin_file(path, canonical_plugin_path(path), registrar);
}

bool EnvPluginLoader::load(const std::string& path) {
  std::string file = canonical_plugin_path(path);
  if (loaded_.count(file)) return false;
  load_plugin_file(path, file, registrar_);
  loaded_.insert(file);
  loaded_paths_.push_back(std::move(file));
  return true;
}

void load_env_plugins(const std::vector<std::string>& paths) {
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  static EnvPluginLoader loader(global_env_registry());
  for (const std::string& path : paths) loader.load(path);
}

}  // namespace rlx
