// `rlx export CHECKPOINT -o policy.rlxp`: a trained policy as one self-describing file for
// applications (rlx::Policy in C++, python/rlx_policy.py in Python; docs/deploy.md).
#include <iostream>
#include <string>
#include <vector>

#include "algorithms/policy_export.h"
#include "cli/command.h"
#include "envs/python_env.h"
#include "core/atomic_file.h"

namespace po = boost::program_options;

namespace rlx::cli {

int run_export_command(const std::vector<std::string>& args) {
  po::options_description options("rlx export CHECKPOINT: write a checkpoint's policy to one file for deployment");
  options.add_options()("help,h", "show this help")("checkpoint", po::value<std::string>(),
                                                     "checkpoint directory, or a trial directory or its checkpoints/ "
                                                     "folder: its newest checkpoint")(
      "output,o", po::value<std::string>()->default_value("policy.rlxp"), "the policy file to write")(
      "policy", po::value<std::string>()->default_value(""), "a multi-agent checkpoint: which of its policies");
  add_env_plugin_option(options);
  po::positional_options_description positionals;
  positionals.add("checkpoint", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx export CHECKPOINT [-o policy.rlxp] [--policy NAME] [--env-plugin PATH ...]\n\n" << options;
    return kExitOk;
  }
  if (!values.count("checkpoint")) throw UsageError("missing CHECKPOINT directory");
  std::vector<std::string> env_plugins;
  if (values.count("env-plugin")) env_plugins = values["env-plugin"].as<std::vector<std::string>>();
  const std::string output = values["output"].as<std::string>();
  add_python_path(python_path_from(values));  // besides the checkpoint's own python_path

  const RestoredAlgorithm restored =
      restore_algorithm(checkpoint_argument(values["checkpoint"].as<std::string>()), env_plugins);
  const PolicyFile file = export_policy(restored, values["policy"].as<std::string>());
  const std::string bytes = encode_policy_file(file);
  write_file_atomic(output, bytes);  // a crash leaves the old file or the new, never a torn one
  std::cout << file.algorithm << " policy for " << file.env_id << " (" << model_kind_name(file.model.kind) << ", "
            << file.parameters.size() << " parameters" << (file.obs_mean.empty() ? "" : ", observation normalisation")
            << ") written to " << output << " (" << bytes.size() << " bytes)\n";
  return kExitOk;
}

}  // namespace rlx::cli
