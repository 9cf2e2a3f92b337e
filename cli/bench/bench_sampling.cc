// `rlx bench sampling`: what being distributed costs. Three figures for the same envs, side by
// side: raw stepping (no policy, no transport), local sampling (plus the batched policy
// inference a worker runs) and the pipeline (real worker processes streaming into a real
// receiver). The first two are single-process figures times N, the limits of N workers.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bench/pipeline_benchmark.h"
#include "bench/sampling_benchmark.h"
#include "bench/stepping_benchmark.h"
#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "core/rlx_program.h"
#include "envs/registry.h"
#include "models/model_spec.h"

namespace po = boost::program_options;

namespace rlx::cli {

int run_bench_sampling(const std::vector<std::string>& args) {
  po::options_description options("rlx bench sampling: raw stepping vs local sampling vs the distributed pipeline");
  options.add_options()("help,h", "show this help")("env", po::value<std::string>(), "env id (required)")(
      "workers", po::value<int>()->default_value(2), "worker processes N")(
      "envs-per-worker", po::value<int>()->default_value(8), "envs per worker K")(
      "fragment-length", po::value<int>()->default_value(64), "steps per fragment T")(
      "seconds", po::value<double>()->default_value(5.0), "seconds per measurement")(
      "seed", po::value<uint64_t>()->default_value(0), "seed");
  add_env_plugin_option(options);
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx bench sampling --env ID [--workers N] [--envs-per-worker K] [--seconds S]\n\n"
              << options;
    return kExitOk;
  }
  if (!values.count("env")) throw UsageError("missing --env ID");
  const int workers = values["workers"].as<int>();
  const int envs = values["envs-per-worker"].as<int>();
  const int fragment_length = values["fragment-length"].as<int>();
  const double seconds = values["seconds"].as<double>();
  const uint64_t seed = values["seed"].as<uint64_t>();
  if (workers < 1) throw UsageError("--workers must be >= 1");
  if (envs < 1) throw UsageError("--envs-per-worker must be >= 1");
  if (fragment_length < 1) throw UsageError("--fragment-length must be >= 1");
  if (!(seconds > 0) || seconds > 3600) throw UsageError("--seconds must be in (0, 3600]");
  load_env_plugins_from(values);
  const std::string env_id = values["env"].as<std::string>();
  prepare_env(env_id, values);
  const EnvFactory& factory = global_env_registry().factory(env_id);

  const int64_t raw_steps = calibrate_env_steps(factory, envs, seconds, seed);
  const SteppingMeasurement raw = measure_env_stepping(factory, envs, raw_steps, seed);
  const ModelSpec config = ModelSpec::for_env(global_env_registry().spec(env_id));
  const LocalSamplingMeasurement local = measure_local_sampling(factory, envs, fragment_length, config, seconds, seed);

  PipelineBenchmarkOptions pipeline_options;
  pipeline_options.worker_program = rlx_program_path();
  pipeline_options.env_id = env_id;
  pipeline_options.num_workers = workers;
  pipeline_options.envs_per_worker = envs;
  pipeline_options.fragment_length = fragment_length;
  pipeline_options.seconds = seconds;
  pipeline_options.seed = seed;
  if (values.count("env-plugin")) pipeline_options.env_plugins = values["env-plugin"].as<std::vector<std::string>>();
  const PipelineMeasurement pipeline = measure_pipeline_sampling(pipeline_options);

  const double raw_total = raw.env_steps_per_s() * workers;
  const double local_total = local.env_steps_per_s() * workers;
  std::cout << "env=" << env_id << " workers=" << workers << " envs_per_worker=" << envs
            << " fragment_length=" << fragment_length << " policy_parameters=" << local.num_parameters << "\n"
            << "raw_env_steps_per_s_one_process=" << static_cast<int64_t>(raw.env_steps_per_s()) << "\n"
            << "local_steps_per_s_one_process=" << static_cast<int64_t>(local.env_steps_per_s()) << "\n"
            << "inference_us_per_call=" << local.inference_us_per_call() << "\n"
            << "local_over_raw=" << (raw.env_steps_per_s() > 0 ? local.env_steps_per_s() / raw.env_steps_per_s() : 0.0)
            << "\n"
            << "pipeline_fragments=" << pipeline.fragments << " pipeline_seconds=" << pipeline.seconds
            << " dropped_stale=" << pipeline.receiver.dropped_stale
            << " messages_rejected=" << pipeline.receiver.messages_rejected << "\n"
            << "raw_env_steps_per_s=" << static_cast<int64_t>(raw_total) << "\n"
            << "local_steps_per_s=" << static_cast<int64_t>(local_total) << "\n"
            << "pipeline_env_steps_per_s=" << static_cast<int64_t>(pipeline.env_steps_per_s()) << "\n"
            << "pipeline_over_raw=" << (raw_total > 0 ? pipeline.env_steps_per_s() / raw_total : 0.0) << "\n"
            << "pipeline_ratio=" << (local_total > 0 ? pipeline.env_steps_per_s() / local_total : 0.0) << std::endl;
  return kExitOk;
}

}  // namespace rlx::cli
