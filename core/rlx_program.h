// Where the `rlx` command is, for starting rlx processes (workers, trials): the launcher that
// starts without LibTorch. rlx-torch, which `rlx` execs for the commands that need LibTorch,
// learns it from the environment variable RLX_PROGRAM that `rlx` sets.
#pragma once

#include <string>

namespace rlx {

// The variable through which `rlx` tells rlx-torch its own path.
constexpr const char* kRlxProgramVariable = "RLX_PROGRAM";

// $RLX_PROGRAM when set and not empty, else this process's executable (/proc/self/exe).
std::string rlx_program_path();

}  // namespace rlx
