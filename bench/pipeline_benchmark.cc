#include "bench/pipeline_benchmark.h"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <memory>
#include <optional>
#include <thread>

#include "bench/synthetic_pixels_env.h"
#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "rollout/worker_pool.h"
#include "rollout/worker_setup.h"
#include "transport/encode.h"

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
  setup.model = pipeline_model(options.env_id, options.hidden_sizes);
  setup.behaviour_values = false;  // as PPO's workers: the learner recomputes V(s)
  return setup;
}

// Size of one fragment message as a worker encodes it: every frame, header included.
uint64_t wire_bytes(SampleBatch batch) {
  uint64_t bytes = 0;
  for (const zmq::message_t& frame : encode_sample_fragment(std::make_shared<const SampleBatch>(std::move(batch)), 1)) {
    bytes += frame.size();
  }
  return bytes;
}

}  // namespace

ModelSpec pipeline_model(const std::string& env_id, const std::vector<int64_t>& hidden_sizes) {
  ModelSpec model = ModelSpec::for_env(global_env_registry().spec(env_id));
  model.hidden_sizes = hidden_sizes;
  return model;
}

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

  std::vector<std::string> env_plugins = options.env_plugins;
  if (is_synthetic_env(options.env_id)) env_plugins.push_back(synthetic_envs_plugin_path(options.worker_program));
  const std::string endpoint = receiver.endpoint();
  const auto launched = Clock::now();
  WorkerPool pool({options.num_workers, 0, std::chrono::milliseconds(2000), {}}, [&](int i) {
    std::vector<std::string> argv{options.worker_program, "worker", "--connect", endpoint,
                                  "--worker-id", std::to_string(i + 1), "--learner-timeout", "30"};
    for (const std::string& plugin : env_plugins) {
      argv.push_back("--env-plugin");
      argv.push_back(plugin);
    }
    return argv;
  });

  // The consumer: pops as fast as fragments arrive, noting when the first came and its size
  // on the wire (encoded again here, as its worker encoded it).
  std::atomic<bool> consuming{true};
  std::atomic<double> first_fragment_ms{-1.0};
  uint64_t first_wire_bytes = 0, first_steps = 0;  // written by the consumer, read after its join
  std::thread consumer([&] {
    while (consuming) {
      std::optional<SampleBatch> batch = receiver.pop(std::chrono::milliseconds(50));
      if (batch && first_fragment_ms < 0.0) {
        first_fragment_ms = std::chrono::duration<double, std::milli>(Clock::now() - launched).count();
        first_steps = static_cast<uint64_t>(batch->num_transitions());
        first_wire_bytes = wire_bytes(std::move(*batch));
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
  const auto workers_cpu = [&pool, &options] {
    double total = 0.0;
    for (int i = 0; i < options.num_workers; ++i) total += read_process_cpu_seconds(pool.pid(i));
    return total;
  };
  const ReceiverStats before = receiver.stats();
  const double workers_cpu_before = workers_cpu(), own_cpu_before = own_cpu_seconds();
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
  const ReceiverStats after = receiver.stats();
  PipelineMeasurement result;
  result.worker_cpu_seconds = workers_cpu() - workers_cpu_before;
  result.receiver_cpu_seconds = own_cpu_seconds() - own_cpu_before;
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
  result.wire_bytes_per_fragment = first_wire_bytes;
  result.steps_per_fragment = first_steps;
  result.receiver = receiver.stats();
  return result;
}

}  // namespace rlx
