// `rlx serve`, shared by both executables: `rlx` serves `.rlxp` files itself (no LibTorch
// loaded: a small, fast-starting process) and hands a command line naming any checkpoint or
// trial to rlx-torch, which restores and exports checkpoints (serve/served_model.h).
#pragma once

#include <string>
#include <vector>

#include "serve/served_model.h"

namespace rlx::cli {

struct ServeBackend {
  // The exporter of checkpoints whose env plugins are now at these paths (`--env-plugin`); null:
  // this executable serves policy files alone.
  CheckpointExporter (*make_exporter)(const std::vector<std::string>& env_plugins) = nullptr;
  // Runs the whole command line elsewhere when a MODEL needs the exporter this one lacks.
  int (*hand_over)(const std::vector<std::string>& args) = nullptr;
};

// `rlx serve [NAME=]MODEL... [options]` (args exclude "rlx serve") run with `backend`; the exit status.
int run_serve(const std::vector<std::string>& args, const ServeBackend& backend);

}  // namespace rlx::cli
