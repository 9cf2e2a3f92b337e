// The distributed sampling pipeline measured end to end: N real `rlx worker` processes with
// the default policy network (or MLP hidden sizes given) streaming fragments into a real
// SampleReceiver, whose consumer only pops (the learner's use of the data is not part of it).
// `rlx bench sampling` reports it beside raw stepping and local sampling of the same envs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/process_memory.h"
#include "models/model_spec.h"
#include "transport/sample_receiver.h"

namespace rlx {

struct PipelineBenchmarkOptions {
  std::string worker_program;   // the rlx binary that runs `rlx worker`
  std::string env_id;
  int num_workers = 2;
  int envs_per_worker = 8;      // K
  int fragment_length = 64;     // T
  int credits_per_worker = 4;
  double warmup_seconds = 1.0;  // after every worker joined, before the timed window
  double seconds = 5.0;         // timed window
  uint64_t seed = 0;
  std::vector<std::string> env_plugins;  // passed on to the workers (a synthetic env's plugin is added)
  std::vector<int64_t> hidden_sizes{64, 64};  // the workers' MLP encoder (the default network's)
};

struct PipelineMeasurement {
  double first_fragment_ms = 0.0;  // from launching the workers to the first fragment popped
  std::vector<ProcessMemory> worker_memory;  // each worker's, read at the end of the timed window
  double seconds = 0.0;
  uint64_t env_steps = 0;       // consumed in the timed window
  uint64_t fragments = 0;
  ReceiverStats receiver;       // at the end
  double worker_cpu_seconds = 0.0;    // the workers' CPU time in the timed window, summed
  double receiver_cpu_seconds = 0.0;  // this process's (receiver, its I/O thread, consumer) in it
  uint64_t wire_bytes_per_fragment = 0;  // every frame of one fragment message, as encoded
  uint64_t steps_per_fragment = 0;       // T * K of that fragment
  double env_steps_per_s() const { return seconds > 0 ? env_steps / seconds : 0.0; }
  // CPU microseconds per consumed env step: the workers' and the receiving process's.
  double worker_cpu_us_per_step() const { return env_steps > 0 ? 1e6 * worker_cpu_seconds / env_steps : 0.0; }
  double receiver_cpu_us_per_step() const { return env_steps > 0 ? 1e6 * receiver_cpu_seconds / env_steps : 0.0; }
  // The workers' time without a credit over their time ready, in the whole run (1: all waiting
  // on the consumer, 0: never).
  double worker_starved_fraction() const {
    return receiver.worker_ready_s > 0 ? receiver.worker_starved_s / receiver.worker_ready_s : 0.0;
  }
  // Bytes a worker sends per env step (one fragment message over its T * K steps).
  double wire_bytes_per_step() const {
    return steps_per_fragment > 0 ? static_cast<double>(wire_bytes_per_fragment) / steps_per_fragment : 0.0;
  }
};

// Runs the pipeline; throws std::runtime_error if the workers do not all join within 30 s.
PipelineMeasurement measure_pipeline_sampling(const PipelineBenchmarkOptions& options);

// The policy network the pipeline's workers run for env_id (registered here) with these hidden
// sizes; measure_local_sampling takes the same.
ModelSpec pipeline_model(const std::string& env_id, const std::vector<int64_t>& hidden_sizes);

}  // namespace rlx
