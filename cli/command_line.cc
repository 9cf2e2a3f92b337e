#include <string>
#include <vector>

#include "cli/command.h"
#include "envs/plugin_loader.h"

namespace po = boost::program_options;

namespace rlx::cli {

void add_env_plugin_option(po::options_description& options) {
  options.add_options()("env-plugin", po::value<std::vector<std::string>>()->composing(),
                        "shared library of custom environments to load (repeatable)");
}

void load_env_plugins_from(const po::variables_map& values) {
  if (!values.count("env-plugin")) return;
  load_env_plugins(values["env-plugin"].as<std::vector<std::string>>());
}

po::variables_map parse_command_line(const std::vector<std::string>& args, const po::options_description& options,
                                     const po::positional_options_description& positionals) {
  po::variables_map values;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positionals).run(), values);
    po::notify(values);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return values;
}

}  // namespace rlx::cli
