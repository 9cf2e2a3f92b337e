#include "bench/pipeline_benchmark.h"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "rollout/worker_pool.h"
#include "rollout/worker_setup.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

WorkerSetup pipeline_setup(const PipelineBenchmarkOptions& options, int worker_index) {
  WorkerSetup setup;
  setup.env_id = options.env_id;
  setup.num_envs = options.envs_per_worker;
  setup.fragment_length = options.fragment_length;
  setup.seed = options.seed;
  setup.worker_index = worker_index;
  setup.model = ModelSpec::for_env(global_env_registry().spec(options.env_id));  // the default network
  setup.behaviour_values = false;  // as PPO's workers: the learner recomputes V(s)
  return setup;
}

}  // namespace

PipelineMeasurement measure_pipeline_sampling(const PipelineBenchmarkOptions& options) {
  if (options.num_workers < 1) throw std::invalid_argument("the pipeline benchmark needs at least one worker");
  const EnvSpec& spec = global_env_registry().spec(options.env_id);
  zmq::context_t context(1);
  ReceiverOptions receiver_options;
  receiver_options.env = ExpectedEnv::of(spec);
  receiver_options.fragment_length = options.fragment_length;
  receiver_options.max_envs_per_worker = options.envs_per_worker;
  receiver_options.credits_per_worker = options.credits_per_worker;
  receiver_options.make_welcome = [&options](int index) { return pipeline_setup(options, index).to_json(); };
  SampleReceiver receiver(context, receiver_options);

  // Version-1 weights of the default network, as a learner would publish first.
  ActorCriticPolicy initial(pipeline_setup(options, 0).model, options.seed);
  auto weights = std::make_shared<Weights>();
  weights->policy_version = 1;
  weights->params = initial.weights();
  receiver.publish_weights(weights);

  const std::string endpoint = receiver.endpoint();
  const auto launched = Clock::now();
  WorkerPool pool({options.num_workers, 0, std::chrono::milliseconds(2000), {}}, [&](int i) {
    std::vector<std::string> argv{options.worker_program, "worker", "--connect", endpoint,
                                  "--worker-id", std::to_string(i + 1), "--learner-timeout", "30"};
    for (const std::string& plugin : options.env_plugins) {
      argv.push_back("--env-plugin");
      argv.push_back(plugin);
    }
    return argv;
  });

  // The consumer: pops as fast as fragments arrive, noting when the first came.
  std::atomic<bool> consuming{true};
  std::atomic<double> first_fragment_ms{-1.0};
  std::thread consumer([&] {
    while (consuming) {
      if (receiver.pop(std::chrono::milliseconds(50)) && first_fragment_ms < 0.0) {
        first_fragment_ms = std::chrono::duration<double, std::milli>(Clock::now() - launched).count();
      }
    }
  });
  const auto join_deadline = Clock::now() + std::chrono::seconds(30);
  while (receiver.stats().workers_joined < static_cast<uint64_t>(options.num_workers)) {
    if (Clock::now() > join_deadline || !pool.poll().empty()) {
      consuming = false;
      consumer.join();
      throw std::runtime_error("pipeline benchmark: workers did not all join (is '" + options.worker_program +
                               "' the rlx binary?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(options.warmup_seconds));
  const ReceiverStats before = receiver.stats();
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
  const ReceiverStats after = receiver.stats();
  PipelineMeasurement result;
  for (int i = 0; i < options.num_workers; ++i) result.worker_memory.push_back(read_process_memory(pool.pid(i)));
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.env_steps = after.env_steps_consumed - before.env_steps_consumed;
  result.fragments = after.fragments_consumed - before.fragments_consumed;
  receiver.stop_workers();
  const auto stop_deadline = Clock::now() + std::chrono::seconds(5);
  while (pool.num_running() > 0 && Clock::now() < stop_deadline) {
    pool.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  consuming = false;
  consumer.join();
  result.first_fragment_ms = first_fragment_ms;
  result.receiver = receiver.stats();
  return result;
}

}  // namespace rlx
