// The `rlx` launcher's hand-over to rlx-torch, the executable with the commands that need
// LibTorch (train, tune, evaluate, bench, envs bench and the hidden learner): `rlx` itself links
// no LibTorch, so --help, --version, envs, keys and worker start in milliseconds; and the
// hand-over of `rlx plot` to rlx-plot, which links Cairo.
#pragma once

#include <string>
#include <vector>

namespace rlx::cli {

// Remembers the command line to hand over; main() calls it first.
void remember_command_line(int argc, char** argv);

// Replaces this process with rlx-torch run on the remembered command line, with RLX_PROGRAM set
// to this executable. Returns only on failure, by throwing std::runtime_error naming the paths
// searched: next to this executable, then ../libexec/rlx/ (an installed tree).
int forward_to_torch(const std::vector<std::string>& args);

// The same for rlx-plot, the executable that draws `rlx plot`'s figures with Cairo (so neither
// rlx, which workers run, nor rlx-torch loads Cairo).
int forward_to_plot(const std::vector<std::string>& args);

}  // namespace rlx::cli
