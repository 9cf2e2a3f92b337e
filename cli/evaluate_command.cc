// `rlx evaluate CHECKPOINT`: run a saved policy for some episodes and summarise the returns.
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/evaluation.h"
#include "cli/command.h"

namespace po = boost::program_options;

namespace rlx::cli {

int run_evaluate_command(const std::vector<std::string>& args) {
  po::options_description options("rlx evaluate CHECKPOINT: run a saved policy for some episodes");
  options.add_options()("help,h", "show this help")("checkpoint", po::value<std::string>(), "checkpoint directory")(
      "episodes", po::value<int>()->default_value(10), "episodes to run")(
      "deterministic", "argmax / mean actions instead of sampling")(
      "seed", po::value<uint64_t>()->default_value(0), "episode i resets with seed + i")(
      "env", po::value<std::string>(), "run in this env instead of the checkpoint's (same spaces)");
  add_env_plugin_option(options);
  po::positional_options_description positionals;
  positionals.add("checkpoint", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx evaluate CHECKPOINT [--episodes N] [--deterministic] [--seed S] [--env ID]\n"
                 "                    [--env-plugin PATH ...]\n\n"
              << options;
    return kExitOk;
  }
  if (!values.count("checkpoint")) throw UsageError("missing CHECKPOINT directory");
  EvaluationOptions evaluation;
  evaluation.checkpoint = values["checkpoint"].as<std::string>();
  evaluation.episodes = values["episodes"].as<int>();
  if (evaluation.episodes < 1) throw UsageError("--episodes must be >= 1");
  evaluation.deterministic = values.count("deterministic") > 0;
  evaluation.seed = values["seed"].as<uint64_t>();
  if (values.count("env")) evaluation.env_id = values["env"].as<std::string>();
  if (values.count("env-plugin")) evaluation.env_plugins = values["env-plugin"].as<std::vector<std::string>>();

  const EvaluationResult r = evaluate_checkpoint(evaluation);
  std::cout << r.algorithm << " policy on " << r.env_id << ", " << r.returns.size() << " episodes"
            << (evaluation.deterministic ? " (deterministic)" : "") << ": return " << r.return_mean << " +- "
            << r.return_std << " (min " << r.return_min << ", max " << r.return_max << "), length " << r.len_mean
            << "\n";
  const nlohmann::json summary = {{"episodes", r.returns.size()}, {"return_mean", r.return_mean},
                                  {"return_std", r.return_std},   {"return_min", r.return_min},
                                  {"return_max", r.return_max},   {"len_mean", r.len_mean}};
  std::cout << summary.dump() << std::endl;
  return kExitOk;
}

}  // namespace rlx::cli
