// Segment command lines, run plugins and result files.
#include "tune/segment.h"

#include <algorithm>
#include <sstream>
#include <system_error>

#include "core/atomic_file.h"
#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "core/config_schema.h"
#include "core/plugin_refs.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

// "--set" text for a param value: numbers exactly, strings bare.
std::string set_arg(const std::string& key, const nlohmann::json& value) {
  return key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
}

// The identity of a plugin file: its canonical path when it exists, else its absolute one.
std::string plugin_identity(const std::string& path) {
  std::error_code error;
  const fs::path canonical = fs::canonical(path, error);
  return error ? fs::absolute(path).lexically_normal().string() : canonical.string();
}

}  // namespace

std::vector<std::string> segment_argv(const Segment& segment) {
  std::vector<std::string> argv = {segment.rlx_program, "train"};
  if (segment.resume) {
    argv.insert(argv.end(), {"--resume", segment.resume->string()});
  } else {
    argv.insert(argv.end(), {segment.experiment_file.string(), "--experiment", segment.experiment_name, "--output",
                             segment.output_root.string(), "--trial-name", segment.trial_name});
  }
  argv.push_back("--quiet");
  for (const auto& [key, value] : segment.params.items()) argv.insert(argv.end(), {"--set", set_arg(key, value)});
  for (const auto& plugin : segment.env_plugins) argv.insert(argv.end(), {"--env-plugin", plugin});
  if (segment.pause_at) {
    argv.insert(argv.end(), {"--pause-at", segment.pause_at->first + "=" + format_double(segment.pause_at->second)});
  }
  if (!segment.log_level.empty()) argv.insert(argv.end(), {"--log-level", segment.log_level});
  return argv;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) line += (line.empty() ? "" : " ") + arg;
  return line;
}

std::vector<std::string> unique_plugin_files(const std::vector<std::string>& plugins) {
  std::vector<std::string> out, seen;
  for (const auto& plugin : plugins) {
    const std::string identity = plugin_identity(plugin);
    if (std::find(seen.begin(), seen.end(), identity) != seen.end()) continue;
    seen.push_back(identity);
    out.push_back(fs::absolute(plugin).lexically_normal().string());
  }
  return out;
}

std::vector<std::string> run_plugins(const std::vector<std::string>& recorded, const std::vector<std::string>& given,
                                     bool fresh) {
  if (!fresh) return unique_plugin_files(given.empty() || same_plugin_files(given, recorded) ? recorded : given);
  std::vector<std::string> all = recorded;
  all.insert(all.end(), given.begin(), given.end());
  return unique_plugin_files(all);
}

bool same_plugin_files(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto identities = [](const std::vector<std::string>& plugins) {
    std::vector<std::string> out;
    for (const auto& plugin : plugins) out.push_back(plugin_identity(plugin));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  return identities(a) == identities(b);
}

std::vector<std::string> plugins_to_pass(const std::vector<std::string>& plugins, const std::vector<std::string>& recorded) {
  if (same_plugin_files(plugins, recorded)) return {};
  return plugins;
}

std::vector<std::string> checkpoint_plugins(const fs::path& checkpoint) {
  const auto manifest = read_json_file(checkpoint / kCheckpointManifestName);
  if (!manifest || !manifest->contains("experiment")) return {};
  const nlohmann::json& experiment = manifest->at("experiment");
  if (!experiment.is_object() || !experiment.contains("plugins")) return {};
  try {
    return plugin_paths(plugins_from_json(experiment.at("plugins"), checkpoint.string() + ": "));
  } catch (const ConfigError&) {
    return {};
  }
}

std::optional<nlohmann::json> read_json_file(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  nlohmann::json json = nlohmann::json::parse(read_file(path), nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  return json;
}

std::optional<double> metric_of(const nlohmann::json& row, const std::string& metric) {
  const nlohmann::json* node = &row;
  std::stringstream path(metric);
  std::string part;
  while (std::getline(path, part, '/')) {
    if (!node->is_object() || !node->contains(part)) return std::nullopt;
    node = &node->at(part);
  }
  if (!node->is_number()) return std::nullopt;
  return node->get<double>();
}

}  // namespace rlx
