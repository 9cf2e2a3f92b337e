// The benchmark process's side of the synthetic envs: registering them in its own registry, and
// the plugin that registers them in the worker processes it starts.
#include <filesystem>
#include <stdexcept>
#include <string>

#include "bench/synthetic_pixels_env.h"

namespace rlx {

namespace {

constexpr const char* kSyntheticEnvsPluginFile = "rlx-synthetic-envs.so";

}  // namespace

void register_synthetic_envs_globally() {
  EnvRegistry& registry = global_env_registry();
  if (!registry.contains(SyntheticPixelsEnv::kId)) register_synthetic_envs(registry);
}

bool is_synthetic_env(const std::string& env_id) { return env_id == SyntheticPixelsEnv::kId; }

std::string synthetic_envs_plugin_path(const std::string& worker_program) {
  const std::filesystem::path plugin = std::filesystem::path(worker_program).parent_path() / kSyntheticEnvsPluginFile;
  if (!std::filesystem::exists(plugin)) {
    throw std::runtime_error("the workers of a benchmark on the synthetic envs load " + plugin.string() +
                             ", which is not there (build the target rlx_synthetic_envs, or all of rlx)");
  }
  return plugin.string();
}

}  // namespace rlx
