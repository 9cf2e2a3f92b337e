// [gpu] tests: the NCCL communicator and PPO learners on CUDA. Skipped (with a warning) where
// no GPU is visible or the build has no NCCL backend / CUDA LibTorch; scripts/gpu-check.sh runs
// them on a GPU machine.
#include "tests/learner/ppo_test_util.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/cuda.h>

#include <chrono>

#include "learner/data_parallel.h"
#include "learner/gloo_communicator.h"
#include "learner/nccl_communicator.h"
#include "learner/rank_threads.h"
#include "tests/learner/learner_test_configs.h"

namespace {

// The reason [gpu] tests cannot run here, or "" when they can.
std::string gpu_unavailable() {
  if (!rlx::nccl_available()) return "this build has no NCCL backend";
  if (rlx::cuda_device_count() < 1) return "no GPU visible";
  if (!torch::cuda::is_available()) return "LibTorch is a CPU-only build";
  return "";
}

}  // namespace

TEST_CASE("NCCL: all-reduce and bytes between two ranks on GPUs (or one)", "[gpu]") {
  const std::string why = gpu_unavailable();
  if (!why.empty()) {
    WARN("[gpu] test skipped: " << why);
    return;
  }
  const int world = std::min(2, rlx::cuda_device_count());
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<torch::Tensor> results(static_cast<size_t>(world));
  rlx::run_rank_threads(world, [&](int rank) {
    auto comm = rlx::make_nccl_communicator(store, rank, world, rank, std::chrono::milliseconds(60000));
    torch::Tensor t = torch::full({1000}, static_cast<float>(rank + 1), torch::TensorOptions().device(comm->device()));
    comm->allreduce(t);
    results[static_cast<size_t>(rank)] = t.cpu();
  });
  const float expected = static_cast<float>(world * (world + 1) / 2);
  for (const torch::Tensor& r : results) CHECK(r.min().item<float>() == expected);
}

TEST_CASE("PPO on CUDA: one update matches the CPU learner", "[gpu]") {
  const std::string why = gpu_unavailable();
  if (!why.empty()) {
    WARN("[gpu] test skipped: " << why);
    return;
  }
  const rlx::ModelSpec model_config = rlx_test::model_config_for("CartPole-v1", {64, 64});
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.num_epochs = 2;
  config.minibatch_size = 128;
  rlx_test::Sampler sampler("CartPole-v1", model_config, 4, 64, 3);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(2);
  rlx::PpoLearner cpu(model_config, config, 1);
  rlx::PpoLearner gpu(model_config, config, 1, torch::Device(torch::kCUDA, 0));
  cpu.update(batches, 0);
  gpu.update(batches, 0);
  const std::vector<float> a = cpu.weights(0)->params, b = gpu.weights(0)->params;
  REQUIRE(a.size() == b.size());
  double max_diff = 0.0, max_ref = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::abs(a[i] - b[i])));
    max_ref = std::max(max_ref, static_cast<double>(std::abs(a[i])));
  }
  CHECK(max_diff <= 1e-4 * max_ref);
}
