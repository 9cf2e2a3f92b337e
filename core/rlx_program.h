// Where the `rlx` command is, for starting rlx processes (workers, trials): the launcher that
// starts without LibTorch. rlx-torch, which `rlx` execs for the commands that need LibTorch,
// learns it from the environment variable RLX_PROGRAM that `rlx` sets.
#pragma once

#include <filesystem>
#include <string>

namespace rlx {

// The variable through which `rlx` tells rlx-torch its own path.
constexpr const char* kRlxProgramVariable = "RLX_PROGRAM";

// $RLX_PROGRAM when set and not empty, else rlx_program_beside(this process's executable).
std::string rlx_program_path();

// For an executable named rlx-torch (run directly, without `rlx` in front), the `rlx` beside it
// (same folder, or ../../bin/rlx from an install's libexec/rlx/) when there is one: workers and
// trials started through it do not load LibTorch. Else the executable itself.
std::string rlx_program_beside(const std::filesystem::path& executable);

}  // namespace rlx
