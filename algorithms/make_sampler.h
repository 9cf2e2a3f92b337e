// The sampler a training run collects from: its own process (num_workers: 0), or worker
// processes over ZeroMQ with the endpoint they connect to and, with --auth-keys, CURVE keys.
#pragma once

#include <filesystem>
#include <memory>

#include "algorithms/algorithm.h"
#include "algorithms/sampler.h"
#include "algorithms/trainer.h"
#include "core/guarded_temp_dir.h"

namespace rlx {

// The run's sampler: a LocalSampler with num_workers: 0 and no bind_endpoint, else a
// RemoteSampler whose workers log to TRIAL_DIR/logs/ (its endpoint written to the endpoint file
// when it is a TCP address). With --auth-keys the local workers' key pair goes into `keys`, a
// temporary directory removed however the run ends (on the signal paths too): keep it alive
// until the sampler is gone.
std::unique_ptr<Sampler> make_sampler(const TrainOptions& options, const Algorithm& algorithm,
                                      const std::filesystem::path& trial_dir, std::unique_ptr<GuardedTempDir>& keys);

}  // namespace rlx
