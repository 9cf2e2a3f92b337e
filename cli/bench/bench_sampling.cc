// `rlx bench sampling`: what being distributed costs. Three figures for the same envs, side by
// side: raw stepping (no policy, no transport), local sampling (plus the batched policy
// inference a worker runs) and the pipeline (real worker processes streaming into a real
// receiver). The first two are single-process figures times N, the limits of N workers. With
// --repeats R each figure is measured R times (interleaved) and the medians are printed.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "bench/pipeline_benchmark.h"
#include "bench/process_memory.h"
#include "bench/sampling_benchmark.h"
#include "bench/stepping_benchmark.h"
#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "cli/number_list.h"
#include "core/rlx_program.h"
#include "envs/registry.h"
#include "models/model_spec.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// One repetition's figures.
struct SamplingRepeat {
  double raw = 0.0;       // raw env steps/s, one process
  double local = 0.0;     // local sampling steps/s, one process
  double inference_us = 0.0;
  double local_cpu_us = 0.0;  // local sampling's CPU per step
  double pipeline = 0.0;  // pipeline env steps/s, all workers
  PipelineMeasurement measurement;
};

// The MLP hidden sizes of --hidden-sizes ("64,64"; "linear" for none); UsageError unless
// positive integers.
std::vector<int64_t> hidden_sizes_of(const std::string& text) {
  std::vector<int64_t> sizes;
  if (text.empty() || text == "linear") return sizes;
  for (double size : parse_number_list(text, "--hidden-sizes")) {
    if (!(size >= 1) || size != std::floor(size) || size > 1e6) {
      throw UsageError("--hidden-sizes takes positive integers, got '" + text + "'");
    }
    sizes.push_back(static_cast<int64_t>(size));
  }
  return sizes;
}

// Local sampling's CPU per step over the pipeline's (workers' and receiver's): what the
// pipeline ratio would be on dedicated cores, whatever else shares the machine.
double cpu_ratio(const SamplingRepeat& run) {
  const double pipeline_us = run.measurement.worker_cpu_us_per_step() + run.measurement.receiver_cpu_us_per_step();
  return pipeline_us > 0 ? run.local_cpu_us / pipeline_us : 0.0;
}

std::string joined(const std::vector<int64_t>& sizes) {
  std::string text;
  for (int64_t size : sizes) text += (text.empty() ? "" : ",") + std::to_string(size);
  return text.empty() ? "linear" : text;
}

}  // namespace

int run_bench_sampling(const std::vector<std::string>& args) {
  po::options_description options("rlx bench sampling: raw stepping vs local sampling vs the distributed pipeline");
  options.add_options()("help,h", "show this help")("env", po::value<std::string>(), "env id (required)")(
      "workers", po::value<int>()->default_value(2), "worker processes N")(
      "envs-per-worker", po::value<int>()->default_value(8), "envs per worker K")(
      "fragment-length", po::value<int>()->default_value(64), "steps per fragment T")(
      "seconds", po::value<double>()->default_value(5.0), "seconds per measurement")(
      "repeats", po::value<int>()->default_value(1), "measure each figure R times and print the medians")(
      "hidden-sizes", po::value<std::string>()->default_value("64,64"),
      "the policy's MLP hidden sizes, local and in the workers (the default network's: 64,64; linear: none)")(
      "seed", po::value<uint64_t>()->default_value(0), "seed");
  add_env_plugin_option(options);
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx bench sampling --env ID [--workers N] [--envs-per-worker K] [--seconds S] [--repeats R]\n"
                 "                          [--hidden-sizes H1,H2]\n\n"
              << options;
    return kExitOk;
  }
  if (!values.count("env")) throw UsageError("missing --env ID");
  const int workers = values["workers"].as<int>();
  const int envs = values["envs-per-worker"].as<int>();
  const int fragment_length = values["fragment-length"].as<int>();
  const double seconds = values["seconds"].as<double>();
  const int repeats = values["repeats"].as<int>();
  const uint64_t seed = values["seed"].as<uint64_t>();
  const std::vector<int64_t> hidden_sizes = hidden_sizes_of(values["hidden-sizes"].as<std::string>());
  if (workers < 1) throw UsageError("--workers must be >= 1");
  if (envs < 1) throw UsageError("--envs-per-worker must be >= 1");
  if (fragment_length < 1) throw UsageError("--fragment-length must be >= 1");
  if (!(seconds > 0) || seconds > 3600) throw UsageError("--seconds must be in (0, 3600]");
  if (repeats < 1 || repeats > 100) throw UsageError("--repeats must be in [1, 100]");
  load_env_plugins_from(values);
  const std::string env_id = values["env"].as<std::string>();
  prepare_env(env_id, values);
  const EnvFactory& factory = global_env_registry().factory(env_id);
  const ModelSpec config = pipeline_model(env_id, hidden_sizes);

  PipelineBenchmarkOptions pipeline_options;
  pipeline_options.worker_program = rlx_program_path();
  pipeline_options.env_id = env_id;
  pipeline_options.num_workers = workers;
  pipeline_options.envs_per_worker = envs;
  pipeline_options.fragment_length = fragment_length;
  pipeline_options.seconds = seconds;
  pipeline_options.seed = seed;
  pipeline_options.hidden_sizes = hidden_sizes;
  if (values.count("env-plugin")) pipeline_options.env_plugins = values["env-plugin"].as<std::vector<std::string>>();

  const int64_t raw_steps = calibrate_env_steps(factory, envs, seconds, seed);
  std::vector<SamplingRepeat> runs;
  int64_t parameters = 0;
  const ObservationLayout layout = config.observation_layout();  // as stored: float32 slots and bytes
  const int64_t obs_bytes = 4 * layout.float_slots + layout.byte_slots;
  for (int r = 0; r < repeats; ++r) {
    SamplingRepeat run;
    run.raw = measure_env_stepping(factory, envs, raw_steps, seed).env_steps_per_s();
    const LocalSamplingMeasurement local = measure_local_sampling(factory, envs, fragment_length, config, seconds, seed);
    run.local = local.env_steps_per_s();
    run.inference_us = local.inference_us_per_call();
    run.local_cpu_us = local.cpu_us_per_step();
    parameters = local.num_parameters;
    run.measurement = measure_pipeline_sampling(pipeline_options);
    run.pipeline = run.measurement.env_steps_per_s();
    if (repeats > 1) {
      std::cout << "repeat=" << r + 1 << " raw_env_steps_per_s_one_process=" << static_cast<int64_t>(run.raw)
                << " local_steps_per_s_one_process=" << static_cast<int64_t>(run.local)
                << " pipeline_env_steps_per_s=" << static_cast<int64_t>(run.pipeline)
                << " pipeline_ratio=" << (run.local > 0 ? run.pipeline / (run.local * workers) : 0.0)
                << " worker_cpu_us_per_step=" << run.measurement.worker_cpu_us_per_step()
                << " receiver_cpu_us_per_step=" << run.measurement.receiver_cpu_us_per_step()
                << " worker_starved_fraction=" << run.measurement.worker_starved_fraction()
                << " local_cpu_us_per_step=" << run.local_cpu_us << std::endl;
    }
    runs.push_back(std::move(run));
  }
  const auto median = [&runs](auto field) {
    std::vector<double> picked;
    for (const SamplingRepeat& run : runs) picked.push_back(field(run));
    return median_of(std::move(picked));
  };
  const double raw_one = median([](const SamplingRepeat& r) { return r.raw; });
  const double local_one = median([](const SamplingRepeat& r) { return r.local; });
  const double pipeline = median([](const SamplingRepeat& r) { return r.pipeline; });
  const double ratio = median([workers](const SamplingRepeat& r) { return r.local > 0 ? r.pipeline / (r.local * workers) : 0.0; });
  const double over_raw = median([workers](const SamplingRepeat& r) { return r.raw > 0 ? r.pipeline / (r.raw * workers) : 0.0; });
  const double inference_us = median([](const SamplingRepeat& r) { return r.inference_us; });
  const PipelineMeasurement& last = runs.back().measurement;
  const double raw_total = raw_one * workers;
  const double local_total = local_one * workers;
  std::cout << "env=" << env_id << " workers=" << workers << " envs_per_worker=" << envs
            << " fragment_length=" << fragment_length << " hidden_sizes=" << joined(hidden_sizes)
            << " policy_parameters=" << parameters << " repeats=" << repeats << "\n"
            << "raw_env_steps_per_s_one_process=" << static_cast<int64_t>(raw_one) << "\n"
            << "local_steps_per_s_one_process=" << static_cast<int64_t>(local_one) << "\n"
            << "inference_us_per_call=" << inference_us << "\n"
            << "local_over_raw=" << (raw_one > 0 ? local_one / raw_one : 0.0) << "\n"
            << "pipeline_fragments=" << last.fragments << " pipeline_seconds=" << last.seconds
            << " dropped_stale=" << last.receiver.dropped_stale
            << " messages_rejected=" << last.receiver.messages_rejected << "\n"
            << "worker_cpu_us_per_step=" << median([](const SamplingRepeat& r) { return r.measurement.worker_cpu_us_per_step(); })
            << " receiver_cpu_us_per_step="
            << median([](const SamplingRepeat& r) { return r.measurement.receiver_cpu_us_per_step(); })
            << " worker_starved_fraction="
            << median([](const SamplingRepeat& r) { return r.measurement.worker_starved_fraction(); })
            << " local_cpu_us_per_step=" << median([](const SamplingRepeat& r) { return r.local_cpu_us; }) << "\n"
            << "pipeline_cpu_ratio=" << median([](const SamplingRepeat& r) { return cpu_ratio(r); }) << "\n"
            << "observation_bytes=" << obs_bytes << "\n"
            << "wire_bytes_per_fragment=" << last.wire_bytes_per_fragment << "\n"
            << "wire_bytes_per_step=" << last.wire_bytes_per_step() << "\n"
            << "raw_env_steps_per_s=" << static_cast<int64_t>(raw_total) << "\n"
            << "local_steps_per_s=" << static_cast<int64_t>(local_total) << "\n"
            << "pipeline_env_steps_per_s=" << static_cast<int64_t>(pipeline) << "\n"
            << "pipeline_env_steps_per_s_per_worker=" << static_cast<int64_t>(pipeline / workers) << "\n"
            << "pipeline_over_raw=" << over_raw << "\n"
            << "pipeline_ratio=" << ratio << std::endl;
  return kExitOk;
}

}  // namespace rlx::cli
