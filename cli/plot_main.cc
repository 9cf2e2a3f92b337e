// The rlx-plot executable: `rlx plot`, which rlx and rlx-torch hand over to it. It alone links
// Cairo (watch/ rlx_plot), so that neither `rlx worker` nor a training loads it.
#include "cli/command.h"
#include "cli/dispatch.h"

int main(int argc, char** argv) {
  const std::vector<rlx::cli::Subcommand> commands{
      {"plot", "draw learning curves of runs and PBT family trees (PNG, SVG)", rlx::cli::run_plot_command}};
  return rlx::cli::run_rlx(argc, argv, commands);
}
