// `rlx envs list | info | rollout | bench`.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/envs_subcommands.h"
#include "core/space_json.h"
#include "envs/registry.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

const char* const kEnvsUsage =
    "usage: rlx envs SUBCOMMAND [OPTIONS]\n\n"
    "subcommands:\n"
    "  list                  every registered env id with its spaces\n"
    "  info ID               the env's spec as JSON\n"
    "  rollout ID --seed S   step an env and print one JSON object per step\n"
    "  bench ID              raw single-core stepping speed\n\n"
    "every subcommand takes --env-plugin PATH, --python-path DIR (both repeatable) and --help;\n"
    "info, rollout and bench take --env-config JSON for a Python env (ids python:MODULE:CLASS).\n";

int run_list(const std::vector<std::string>& args) {
  po::options_description options("rlx envs list: every registered env id with its spaces");
  options.add_options()("help,h", "show this help");
  add_env_plugin_option(options);
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx envs list [--env-plugin PATH ...]\n\n" << options;
    return kExitOk;
  }
  load_env_plugins_from(values);
  const EnvRegistry& registry = global_env_registry();
  for (const std::string& id : registry.ids()) {
    const EnvSpec& spec = registry.spec(id);
    std::cout << id << "  observation=" << spec.observation_space.to_string()
              << "  action=" << spec.action_space.to_string() << "\n";
  }
  return kExitOk;
}

int run_info(const std::vector<std::string>& args) {
  po::options_description options("rlx envs info ID: the env's spec as JSON");
  options.add_options()("help,h", "show this help")("id", po::value<std::string>(), "env id");
  add_env_plugin_option(options);
  add_env_config_option(options);
  po::positional_options_description positionals;
  positionals.add("id", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx envs info ID [--env-plugin PATH ...]\n\n" << options;
    return kExitOk;
  }
  if (!values.count("id")) throw UsageError("missing env ID");
  load_env_plugins_from(values);
  prepare_env(values["id"].as<std::string>(), values);
  std::cout << env_spec_to_json(global_env_registry().spec(values["id"].as<std::string>())).dump(2) << "\n";
  return kExitOk;
}

}  // namespace

int run_envs_command(const std::vector<std::string>& args) {
  const std::map<std::string, int (*)(const std::vector<std::string>&)> subcommands = {
      {"list", run_list}, {"info", run_info}, {"rollout", run_envs_rollout}, {"bench", run_envs_bench}};
  if (args.empty()) throw UsageError(std::string("missing subcommand\n") + kEnvsUsage);
  if (args.front() == "--help" || args.front() == "-h") {
    std::cout << kEnvsUsage;
    return kExitOk;
  }
  auto it = subcommands.find(args.front());
  if (it == subcommands.end()) {
    throw UsageError("unknown subcommand '" + args.front() + "'\n" + kEnvsUsage);
  }
  return it->second(std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace rlx::cli
