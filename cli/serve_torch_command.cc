// `rlx serve` in rlx-torch: every MODEL, checkpoints and trials too (restored and exported as
// `rlx export` does).
#include "algorithms/multi_agent_algorithm.h"
#include "algorithms/policy_export.h"
#include "cli/command.h"
#include "cli/serve_command.h"
#include "core/config_error.h"
#include "core/named_registry.h"

namespace rlx::cli {

namespace {

CheckpointExporter checkpoint_exporter(const std::vector<std::string>& env_plugins) {
  return [env_plugins](const std::filesystem::path& checkpoint, const std::string& policy) {
    const RestoredAlgorithm restored = restore_algorithm(checkpoint, env_plugins);
    const auto* multi = dynamic_cast<const MultiAgentAlgorithm*>(restored.algorithm.get());
    if (multi && policy.empty()) {
      throw ConfigError(checkpoint.string() + " is a multi-agent checkpoint of the policies " +
                        joined_names(multi->policy_map().policy_names()) + ": serve each as NAME=PATH#POLICY");
    }
    return export_policy(restored, policy);
  };
}

}  // namespace

int run_serve_command(const std::vector<std::string>& args) {
  ServeBackend backend;
  backend.make_exporter = checkpoint_exporter;
  return run_serve(args, backend);
}

}  // namespace rlx::cli
