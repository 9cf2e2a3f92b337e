// Where a run's workers connect: by default a private ipc:// socket in a directory only this
// user can open, removed with the run; a non-loopback address only with keys. And 100 local
// worker processes feeding one sampler within their credits and the policy-lag bound.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/remote_sampler.h"
#include "core/temp_dir.h"
#include "envs/registry.h"
#include "models/rollout_policy.h"

namespace rlx {
namespace {

RemoteSamplerOptions cartpole_sampler() {
  RemoteSamplerOptions options;
  options.setup.env_id = "CartPole-v1";
  options.setup.model = ModelSpec::for_env(global_env_registry().spec("CartPole-v1"));
  options.num_local_workers = 0;  // remote workers only: nothing is started
  return options;
}

TEST_CASE("a run's worker endpoint is a private ipc socket unless told otherwise", "[algorithms][workers]") {
  std::filesystem::path dir;
  {
    RemoteSampler sampler(cartpole_sampler());
    const std::string endpoint = sampler.endpoint();
    REQUIRE(endpoint.rfind("ipc://", 0) == 0);
    dir = std::filesystem::path(endpoint.substr(6)).parent_path();
    struct stat info {};
    REQUIRE(::stat(dir.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0700);  // other users cannot reach the socket inside
    CHECK(info.st_uid == ::getuid());
    CHECK(std::filesystem::exists(std::filesystem::path(endpoint.substr(6))));
  }
  CHECK_FALSE(std::filesystem::exists(dir));  // removed with the run
}

TEST_CASE("without keys a run refuses an address that is not loopback", "[algorithms][workers]") {
  RemoteSamplerOptions options = cartpole_sampler();
  options.bind_endpoint = "tcp://0.0.0.0:*";
  CHECK_THROWS_WITH(RemoteSampler(options), Catch::Contains("not a loopback address") && Catch::Contains("--auth-keys"));
  options.bind_endpoint = "tcp://127.0.0.1:*";
  RemoteSampler loopback(options);
  CHECK(loopback.endpoint().rfind("tcp://127.0.0.1:", 0) == 0);
}

TEST_CASE("100 local workers feed one sampler within their credits and the policy-lag bound", "[algorithms][workers]") {
  TempDir logs("rlx-sampler-100-");
  RemoteSamplerOptions options = cartpole_sampler();
  options.setup.num_envs = 1;
  options.setup.fragment_length = 16;
  options.num_local_workers = 100;
  options.worker_program = std::string(RLX_BINARY_DIR) + "/rlx";
  options.credits_per_worker = 2;
  options.max_policy_lag = 1;
  options.max_worker_restarts = 0;
  options.log_dir = logs.path();
  RemoteSampler sampler(options);
  const std::vector<float> params = ActorCriticPolicy(options.setup.model, 1).weights();
  // Iterations of a learner that takes 800 steps (50 fragments) while 200 are granted, each
  // once at least 150 wait: the older ones left behind go stale two versions later, and must
  // be dropped and counted rather than collected.
  uint64_t version = 0;
  uint64_t collected = 0;
  for (int iteration = 0; iteration < 6; ++iteration) {
    auto weights = std::make_shared<Weights>();
    weights->policy_version = ++version;
    weights->params = params;
    sampler.publish(weights);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (sampler.stats().fragments_queued < 150 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(sampler.stats().fragments_queued >= 150);
    for (const SampleBatch& batch : sampler.collect(800)) {
      INFO("iteration " << iteration << ": a fragment of version " << batch.policy_version << " while " << version
                        << " is current");
      CHECK(batch.policy_version + options.max_policy_lag >= version);
      CHECK(batch.policy_version <= version);
      ++collected;
    }
  }
  const SamplerStats stats = sampler.stats();
  INFO("received " << stats.fragments_received << " consumed " << stats.fragments_consumed << " stale "
                   << stats.fragments_dropped_stale << " other " << stats.fragments_dropped_other << " queued "
                   << stats.fragments_queued);
  CHECK(stats.workers_joined == 100);
  CHECK(stats.workers_lost == 0);
  CHECK(stats.worker_restarts == 0);
  CHECK(stats.fragments_refused == 0);  // a fragment sent beyond a worker's credits is refused
  CHECK(stats.messages_rejected == 0);
  CHECK(stats.fragments_consumed == collected);
  CHECK(stats.fragments_dropped_stale > 0);
  CHECK(stats.fragments_received ==
        stats.fragments_consumed + stats.fragments_dropped_stale + stats.fragments_dropped_other + stats.fragments_queued);
  // Queued fragments never exceed the credits granted: 100 workers x 2.
  CHECK(stats.fragments_queued <= 200);
  CHECK(sampler.queued_bytes_bound() > 0);
}

}  // namespace
}  // namespace rlx
