// The `rlx envs` subcommands that live in files of their own.
#pragma once

#include <string>
#include <vector>

namespace rlx::cli {

// `rlx envs rollout ID --seed S [--state ...] [--actions ...] [--steps N]`.
int run_envs_rollout(const std::vector<std::string>& args);

// `rlx envs bench ID [--envs K] [--steps N] [--repeats R]`.
int run_envs_bench(const std::vector<std::string>& args);

}  // namespace rlx::cli
