// The `rlx bench` subcommands that live in files of their own.
#pragma once

#include <string>
#include <vector>

namespace rlx::cli {

// `rlx bench sampling --env ID [--workers N] [--envs-per-worker K] [--seconds S]`.
int run_bench_sampling(const std::vector<std::string>& args);

// `rlx bench startup [--repeats R]`: exec-to-exit times of light commands and an idle worker's memory.
int run_bench_startup(const std::vector<std::string>& args);

}  // namespace rlx::cli
