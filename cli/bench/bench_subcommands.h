// The `rlx bench` subcommands that live in files of their own.
#pragma once

#include <string>
#include <vector>

namespace rlx::cli {

// `rlx bench sampling --env ID [--workers N] [--envs-per-worker K] [--seconds S]`.
int run_bench_sampling(const std::vector<std::string>& args);

// `rlx bench scale [--workers N,..] [--real-workers]`: receiver CPU per fragment with N synthetic
// worker connections, or N real `rlx worker` processes (with their memory).
int run_bench_scale(const std::vector<std::string>& args);

// `rlx bench recurrent [--width H] [--envs K] [--cores lstm,gru]`: an LSTM/GRU policy against the
// MLP of the same width, worker act() and PpoLearner::update times as JSON lines.
int run_bench_recurrent(const std::vector<std::string>& args);

// `rlx bench startup [--repeats R]`: exec-to-exit times of light commands and an idle worker's memory.
int run_bench_startup(const std::vector<std::string>& args);

// `rlx bench serve [NAME=]POLICY.rlxp ... [--concurrency 1,8,64,256] [--rate R,..] [--python-baseline]`:
// requests/s and latency percentiles of `rlx serve` per protocol and load level, as JSON lines.
int run_bench_serve(const std::vector<std::string>& args);

// `rlx bench replay [--transitions N] [--increment M] [--repeats R]`: a Hopper replay buffer in
// checkpoints, whole per checkpoint against segments (size, write and read time), as JSON lines.
int run_bench_replay(const std::vector<std::string>& args);

}  // namespace rlx::cli
