#include <filesystem>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/checkpoint_dir.h"
#include "core/log.h"
#include "envs/plugin_loader.h"
#include "envs/python_env.h"

namespace po = boost::program_options;

namespace rlx::cli {

void add_env_plugin_option(po::options_description& options) {
  options.add_options()("env-plugin", po::value<std::vector<std::string>>()->composing(),
                        "shared library of custom environments to load (repeatable)")(
      "python-path", po::value<std::vector<std::string>>()->composing(),
      "a directory to put in front of sys.path for Python envs (env ids python:MODULE:CLASS; repeatable; "
      "PYTHONPATH works too)");
}

void add_env_config_option(po::options_description& options) {
  options.add_options()("env-config", po::value<std::string>()->default_value("{}"),
                        "a Python env's constructor keyword arguments, as a JSON object");
}

std::vector<std::string> python_path_from(const po::variables_map& values) {
  std::vector<std::string> dirs;
  if (values.count("python-path")) {
    for (const std::string& dir : values["python-path"].as<std::vector<std::string>>()) {
      dirs.push_back(std::filesystem::absolute(dir).lexically_normal().string());
    }
  }
  return dirs;
}

void load_env_plugins_from(const po::variables_map& values) {
  add_python_path(python_path_from(values));
  if (!values.count("env-plugin")) return;
  load_env_plugins(values["env-plugin"].as<std::vector<std::string>>());
}

void prepare_env(const std::string& env_id, const po::variables_map& values) {
  if (!is_python_env_id(env_id)) return;
  register_python_env(env_id, values.count("env-config") ? values["env-config"].as<std::string>() : "{}");
}

std::filesystem::path checkpoint_argument(const std::string& given) {
  std::filesystem::path taken = resolve_checkpoint(given);
  say_checkpoint_taken(given, taken);
  return taken;
}

void say_checkpoint_taken(const std::string& given, const std::filesystem::path& taken) {
  if (taken == std::filesystem::path(given)) return;
  logger().info("using {}, the newest checkpoint in {}", taken.string(), given);
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
