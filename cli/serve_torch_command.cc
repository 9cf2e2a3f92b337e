// `rlx serve` in rlx-torch: every MODEL, checkpoints and trials too (restored and exported as
// `rlx export` does).
#include "algorithms/policy_export.h"
#include "cli/command.h"
#include "cli/serve_command.h"

namespace rlx::cli {

namespace {

CheckpointExporter checkpoint_exporter(const std::vector<std::string>& env_plugins) {
  return [env_plugins](const std::filesystem::path& checkpoint) { return export_policy(restore_algorithm(checkpoint, env_plugins)); };
}

}  // namespace

int run_serve_command(const std::vector<std::string>& args) {
  ServeBackend backend;
  backend.make_exporter = checkpoint_exporter;
  return run_serve(args, backend);
}

}  // namespace rlx::cli
