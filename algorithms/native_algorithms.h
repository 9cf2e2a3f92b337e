// The torch-free learners' algorithms, as the `rlx` executable builds them (it links no
// LibTorch): NativePpoAlgorithm (learner_backend: native or auto) and SacAlgorithm (SAC's only
// learner).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "algorithms/algorithm.h"

namespace rlx {

// Why the native learner cannot train the experiment (naming the key and what it needs), or
// nullopt when it can: PPO, precision fp32, device cpu, num_learners 1, separate policy and value
// networks, an MLP encoder (under encoder: auto it is chosen from the env's observation space: the
// experiment's env is loaded, and a ConfigError of the model thrown); or SAC (algorithms/sac_algorithm.h
// checks its own; precision is no SAC key). (The env's action space, Discrete or Box, is checked
// when the learner is built.)
std::optional<std::string> native_learner_refusal(const Experiment& experiment);

// Whether the experiment trains with the native learner: always for SAC (its only learner);
// else learner_backend native, or auto and native_learner_refusal has nothing to say.
bool uses_native_learner(const Experiment& experiment);

// learner_threads: 0 (auto) takes one thread per CPU that no local worker uses, up to this many.
constexpr int kAutoLearnerThreads = 8;

// The threads the native learner splits its large products over (native/product_threads.h):
// learner_threads, or for 0 the CPUs this process may run on less num_workers (the local worker
// processes), from 1 to kAutoLearnerThreads.
int learner_product_threads(const CommonConfig& common);

// The native PPO algorithm, or SacAlgorithm for SAC, with the process's product threads set
// to learner_product_threads; throws ConfigError with
// native_learner_refusal's reason, and on a data-parallel member or placement in options.
std::unique_ptr<Algorithm> make_native_algorithm(const Experiment& experiment, const DataParallelOptions& options = {});

}  // namespace rlx
