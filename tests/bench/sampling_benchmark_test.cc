// Local sampling speed (bench/sampling_benchmark.h) and the worker pipeline
// (bench/pipeline_benchmark.h) on float, MinAtar and 84x84x4 pixel observations: what one
// measurement counts and that its figures are sane (rates are printed by `rlx bench sampling`,
// never asserted).
#include <catch2/catch.hpp>

#include <string>

#include "bench/pipeline_benchmark.h"
#include "bench/sampling_benchmark.h"
#include "bench/synthetic_pixels_env.h"
#include "envs/registry.h"
#include "models/model_spec.h"

TEST_CASE("measure_local_sampling counts one fragment at zero seconds", "[bench]") {
  rlx::ModelSpec config;
  config.hidden_sizes = {8};
  const auto result = rlx::measure_local_sampling("CartPole-v1", 3, 10, config, 0.0, 1);
  CHECK(result.fragments == 1);
  CHECK(result.env_steps == 30);
  CHECK(result.inference_calls == 10);
  CHECK(result.num_parameters == (4 * 8 + 8) + (8 * 2 + 2) + (4 * 8 + 8) + (8 + 1));
  CHECK(result.seconds > 0.0);
  CHECK_THROWS_AS(rlx::measure_local_sampling("NoSuchEnv-v0", 3, 10, config, 0.0, 1), rlx::UnknownEnvError);
}

namespace {

// Bytes a fragment of T steps sends per step at least: each step's observation (float32 slots
// and bytes), Discrete action index (int64), reward and log-prob (float32), terminated and
// truncated (one byte each); the bootstrap observations spread over the T steps.
double least_wire_bytes_per_step(const rlx::ModelSpec& model, int fragment_length) {
  const rlx::ObservationLayout layout = model.observation_layout();
  const double observation = 4.0 * static_cast<double>(layout.float_slots) + static_cast<double>(layout.byte_slots);
  return observation + 8 + 4 + 4 + 1 + 1 + observation / fragment_length;
}

}  // namespace

TEST_CASE("Local sampling steps MinAtar and the 84x84x4 pixel env with byte observations", "[bench][sampling]") {
  rlx::register_synthetic_envs_globally();
  for (const char* env : {"MinAtar/Breakout-v1", "Synthetic/Pixels84-v0"}) {
    INFO(env);
    const rlx::ModelSpec model = rlx::pipeline_model(env, {8});
    const auto result = rlx::measure_local_sampling(env, 2, 8, model, 0.0, 3);
    CHECK(result.fragments == 1);
    CHECK(result.env_steps == 16);
    CHECK(result.env_steps_per_s() > 0.0);
    CHECK(result.cpu_seconds >= 0.0);
    CHECK(result.num_parameters > 0);
  }
}

TEST_CASE("The sampling pipeline streams MinAtar and pixel fragments from real workers", "[bench][sampling]") {
  rlx::register_synthetic_envs_globally();
  for (const char* env : {"MinAtar/Breakout-v1", "Synthetic/Pixels84-v0"}) {
    INFO(env);
    rlx::PipelineBenchmarkOptions options;
    options.worker_program = std::string(RLX_BINARY_DIR) + "/rlx";  // the pixel env's plugin lies beside it
    options.env_id = env;
    options.num_workers = 1;
    options.envs_per_worker = 2;
    options.fragment_length = 16;
    options.warmup_seconds = 0.2;
    options.seconds = 0.5;
    options.hidden_sizes = {8};
    const rlx::PipelineMeasurement m = rlx::measure_pipeline_sampling(options);
    CHECK(m.fragments > 0);
    CHECK(m.env_steps == m.fragments * 32);
    CHECK(m.env_steps_per_s() > 0.0);
    CHECK(m.receiver.messages_rejected == 0);
    CHECK(m.receiver.refused == 0);
    CHECK(m.steps_per_fragment == 32);
    const rlx::ModelSpec model = rlx::pipeline_model(env, options.hidden_sizes);
    const double least = least_wire_bytes_per_step(model, options.fragment_length);
    CHECK(m.wire_bytes_per_step() >= least);
    // The rest: the frame headers and the final observations of episodes that ended.
    CHECK(m.wire_bytes_per_step() <= 1.5 * least + 64);
    CHECK(m.worker_cpu_seconds >= 0.0);
    CHECK(m.receiver_cpu_seconds >= 0.0);
    CHECK(m.worker_starved_fraction() >= 0.0);
    CHECK(m.worker_starved_fraction() <= 1.0);
  }
}

TEST_CASE("The pixel env's plugin is looked for beside the worker program", "[bench][sampling]") {
  CHECK_THROWS_WITH(rlx::synthetic_envs_plugin_path("/nonexistent/rlx"),
                    Catch::Contains("/nonexistent/rlx-synthetic-envs.so") && Catch::Contains("rlx_synthetic_envs"));
  CHECK(rlx::synthetic_envs_plugin_path(std::string(RLX_BINARY_DIR) + "/rlx") ==
        std::string(RLX_BINARY_DIR) + "/rlx-synthetic-envs.so");
}
