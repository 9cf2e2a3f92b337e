// `rlx envs bench`: raw single-core stepping speed with random actions.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bench/minatar_benchmark.h"
#include "bench/physics_benchmark.h"
#include "bench/stepping_benchmark.h"
#include "bench/synthetic_pixels_env.h"
#include "cli/command.h"
#include "cli/envs_subcommands.h"
#include "envs/registry.h"

namespace po = boost::program_options;

namespace rlx::cli {

int run_envs_bench(const std::vector<std::string>& args) {
  po::options_description options("rlx envs bench ID: raw single-core stepping speed, random actions");
  options.add_options()("help,h", "show this help")("id", po::value<std::string>(), "env id")(
      "envs", po::value<int>()->default_value(1), "envs stepped as one VectorEnv")(
      "steps", po::value<int64_t>()->default_value(0), "steps per env per repeat (default: about one second's worth)")(
      "repeats", po::value<int>()->default_value(3), "timed repeats; the final line is their median")(
      "seed", po::value<uint64_t>()->default_value(0), "seed of envs and actions");
  add_env_plugin_option(options);
  add_env_config_option(options);
  po::positional_options_description positionals;
  positionals.add("id", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx envs bench ID [--envs K] [--steps N] [--repeats R]\n\n" << options;
    return kExitOk;
  }
  if (!values.count("id")) throw UsageError("missing env ID");
  const int num_envs = values["envs"].as<int>();
  int64_t steps = values["steps"].as<int64_t>();
  const int repeats = values["repeats"].as<int>();
  const uint64_t seed = values["seed"].as<uint64_t>();
  if (num_envs < 1) throw UsageError("--envs must be >= 1, got " + std::to_string(num_envs));
  if (steps < 0) throw UsageError("--steps must be >= 0, got " + std::to_string(steps));
  if (repeats < 1) throw UsageError("--repeats must be >= 1, got " + std::to_string(repeats));
  load_env_plugins_from(values);
  register_synthetic_envs_globally();  // Synthetic/Pixels84-v0 and the like: ids for benchmarks only

  const std::string id = values["id"].as<std::string>();
  prepare_env(id, values);
  const EnvFactory& factory = global_env_registry().factory(id);
  if (steps == 0) steps = calibrate_env_steps(factory, num_envs, 1.0, seed);

  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    const SteppingMeasurement m = measure_env_stepping(factory, num_envs, steps, seed + r);
    rates.push_back(m.env_steps_per_s());
    std::cout << "env=" << id << " envs=" << num_envs << " repeat=" << r + 1 << " env_steps=" << m.env_steps
              << " episodes=" << m.episodes << " seconds=" << m.seconds
              << " env_steps_per_s=" << static_cast<int64_t>(m.env_steps_per_s()) << "\n";
  }
  std::sort(rates.begin(), rates.end());
  const double median = rates.size() % 2 ? rates[rates.size() / 2]
                                         : 0.5 * (rates[rates.size() / 2 - 1] + rates[rates.size() / 2]);
  std::cout << "env_steps_per_s=" << static_cast<int64_t>(median) << std::endl;
  const std::unique_ptr<Env> probe = factory();
  // MinAtar envs: the game alone and one env through the Env API (no VectorEnv), side by side.
  if (const std::optional<double> first = measure_minatar_game_steps_per_s(*probe, 1.0, seed)) {
    std::vector<double> game{*first}, api;
    for (int r = 0; r < repeats; ++r) {
      if (r > 0) game.push_back(*measure_minatar_game_steps_per_s(*probe, 1.0, seed + r));
      api.push_back(*measure_minatar_env_api_steps_per_s(*probe, 1.0, seed + r));
    }
    std::sort(game.begin(), game.end());
    std::sort(api.begin(), api.end());
    const double game_median = game[game.size() / 2], api_median = api[api.size() / 2];
    std::cout << "game_steps_per_s=" << static_cast<int64_t>(game_median) << "\n"
              << "env_api_steps_per_s=" << static_cast<int64_t>(api_median) << "\n"
              << "env_api_ratio_to_bare_game=" << api_median / game_median << "\n"
              << "ratio_to_bare_game=" << median / game_median << std::endl;
  }
  // MuJoCo envs: the same model stepped bare, the physics-only limit, side by side.
  if (const std::optional<int> frame_skip = mujoco_frame_skip(*probe)) {
    std::vector<double> physics;
    for (int r = 0; r < repeats; ++r) physics.push_back(*measure_mj_steps_per_s(*probe, 1.0, seed + r));
    std::sort(physics.begin(), physics.end());
    const double mj_median = physics[physics.size() / 2];
    std::cout << "mj_steps_per_s=" << static_cast<int64_t>(mj_median) << "\n"
              << "frame_skip=" << *frame_skip << "\n"
              << "ratio_to_bare_mj_step=" << median / (mj_median / *frame_skip) << std::endl;
  }
  return kExitOk;
}

}  // namespace rlx::cli
