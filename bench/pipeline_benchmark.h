// The distributed sampling pipeline measured end to end: N real `rlx worker` processes with
// the default policy network streaming fragments into a real SampleReceiver, whose consumer
// only pops (the learner's use of the data is not part of it). `rlx bench sampling` reports
// it beside raw stepping and local sampling of the same envs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/process_memory.h"
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
  std::vector<std::string> env_plugins;  // passed on to the workers
};

struct PipelineMeasurement {
  double first_fragment_ms = 0.0;  // from launching the workers to the first fragment popped
  std::vector<ProcessMemory> worker_memory;  // each worker's, read at the end of the timed window
  double seconds = 0.0;
  uint64_t env_steps = 0;       // consumed in the timed window
  uint64_t fragments = 0;
  ReceiverStats receiver;       // at the end
  double env_steps_per_s() const { return seconds > 0 ? env_steps / seconds : 0.0; }
};

// Runs the pipeline; throws std::runtime_error if the workers do not all join within 30 s.
PipelineMeasurement measure_pipeline_sampling(const PipelineBenchmarkOptions& options);

}  // namespace rlx
