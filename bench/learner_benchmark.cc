#include "bench/learner_benchmark.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>

#include "envs/registry.h"
#include "envs/vector_env.h"
#include "learner/data_parallel.h"
#include "learner/gloo_communicator.h"
#include "learner/learner_group.h"
#include "learner/nccl_communicator.h"
#include "learner/policy_networks.h"
#include "learner/rank_threads.h"
#include "rollout/fragment_collector.h"
#include "models/rollout_policy.h"

namespace rlx {

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

LearnerBenchmarkResult run_learner_benchmark(const LearnerBenchmarkOptions& options) {
  const int world = options.num_learners;
  if (world < 1) throw std::invalid_argument("learner benchmark needs >= 1 learner");
  if (options.num_fragments < world) throw std::invalid_argument("learner benchmark needs at least one fragment per learner");
  if (options.repeats < 1) throw std::invalid_argument("learner benchmark needs >= 1 repeat");
  learner_device(options.device, 0);  // validates the name
  set_inference_threads(1);           // one intra-op thread per learner (as rlx train)

  ModelSpec model_config = ModelSpec::for_env(global_env_registry().spec(options.env_id));
  model_config.hidden_sizes = options.hidden_sizes;
  PpoConfig config;
  config.minibatch_size = options.minibatch_size;
  config.num_epochs = options.num_epochs;
  config.precision = options.precision;
  config.analytic_gradients = options.analytic_gradients;

  // One batch of real fragments from the untrained policy.
  std::vector<SampleBatch> batches(static_cast<size_t>(options.num_fragments));
  {
    VectorEnv envs(global_env_registry().factory(options.env_id), options.num_envs);
    ActorCriticPolicy policy(model_config, 1);
    FragmentCollector collector(envs, policy, options.fragment_length, 1);
    for (SampleBatch& batch : batches) collector.collect(batch);
  }
  std::vector<int64_t> offsets(batches.size());
  int64_t total = 0;
  for (size_t f = 0; f < batches.size(); ++f) {
    offsets[f] = total;
    total += batches[f].num_transitions();
  }

  std::vector<std::unique_ptr<PpoLearner>> learners;
  for (int rank = 0; rank < world; ++rank) {
    learners.push_back(std::make_unique<PpoLearner>(model_config, config, 1, learner_device(options.device, rank)));
  }
  LearnerBenchmarkResult result;
  result.batch_samples = total;
  result.num_parameters = learners[0]->model().num_parameters();
  result.runs.resize(static_cast<size_t>(options.repeats));

  auto store = c10::make_intrusive<c10d::HashStore>();
  run_rank_threads(world, [&](int rank) {
    PpoLearner& learner = *learners[static_cast<size_t>(rank)];
    std::vector<SampleBatch> mine;
    PpoShard shard;
    shard.global_samples = total;
    // Consecutive fragments per rank, as the driver deals them.
    for (size_t f = 0; f < batches.size(); ++f) {
      if (static_cast<int>(f * static_cast<size_t>(world) / batches.size()) != rank) continue;
      mine.push_back(batches[f]);
      shard.fragment_offsets.push_back(offsets[f]);
    }
    std::unique_ptr<Communicator> host, device_comm;
    AllreduceClock clock;
    if (world > 1) {
      host = std::make_unique<GlooCommunicator>(store, rank, world, std::chrono::milliseconds(120000));
      if (learner.device().is_cuda()) {
        device_comm = make_nccl_communicator(store, rank, world, learner.device().index(), std::chrono::milliseconds(120000));
      }
      learner.set_data_parallel_hooks(make_ppo_hooks(device_comm ? *device_comm : *host, *host, &clock));
    }
    const PpoShard* shard_ptr = world > 1 ? &shard : nullptr;
    learner.update(mine, 0, shard_ptr);  // warm-up
    for (int r = 0; r < options.repeats; ++r) {
      if (host) host->barrier();
      clock = AllreduceClock{};
      const auto start = std::chrono::steady_clock::now();
      const PpoUpdateMetrics metrics = learner.update(mine, 0, shard_ptr);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (rank == 0) {
        result.skipped_steps += metrics.skipped_steps;
        LearnerBenchmarkRun& run = result.runs[static_cast<size_t>(r)];
        run.seconds = seconds;
        run.samples_per_s = static_cast<double>(total) / seconds;
        run.allreduce_share = clock.seconds / seconds;
      }
    }
  });
  std::vector<double> rates, shares;
  for (const LearnerBenchmarkRun& run : result.runs) {
    rates.push_back(run.samples_per_s);
    shares.push_back(run.allreduce_share);
  }
  result.samples_per_s = median(rates);
  result.allreduce_share = median(shares);
  return result;
}

}  // namespace rlx
