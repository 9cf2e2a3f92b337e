#include "core/plugin_refs.h"

#include <filesystem>

#include "core/config_error.h"
#include "core/sha256.h"

namespace rlx {

namespace fs = std::filesystem;

std::string PluginRef::file_name() const { return fs::path(path).filename().string(); }

std::vector<std::string> plugin_paths(const std::vector<PluginRef>& plugins) {
  std::vector<std::string> paths;
  for (const PluginRef& plugin : plugins) paths.push_back(plugin.path);
  return paths;
}

std::vector<PluginRef> plugins_at(const std::vector<std::string>& paths, const std::vector<PluginRef>& recorded) {
  std::vector<PluginRef> plugins;
  for (const std::string& path : paths) {
    PluginRef plugin{path, ""};
    for (const PluginRef& known : recorded) {
      if (known.path == path) plugin.sha256 = known.sha256;
    }
    plugins.push_back(std::move(plugin));
  }
  return plugins;
}

namespace {

// "at PATH, sha256 0123456789ab...": where and as what the run recorded a plugin, for messages.
std::string recorded_text(const PluginRef& recorded) {
  return "at " + recorded.path + ", sha256 " + recorded.sha256.substr(0, 12) + "...";
}

// The hash of the file at `path`, which stands for `recorded` (the plugin as the run recorded it;
// no sha256: no record). `given` is the --env-plugin text that named `path`, empty when `path` is
// the recorded one. EnvPluginError when the file is missing: it names the file, how it was named
// and what the run recorded.
std::string hash_of(const std::string& path, const std::string& given, const PluginRef& recorded) {
  std::error_code error;
  if (fs::is_regular_file(path, error)) return sha256_file_hex(path);
  if (!given.empty()) {
    std::string message = "--env-plugin " + given + ": no such file" + (given == path ? "" : " (" + path + ")");
    if (!recorded.sha256.empty()) {
      message += "; it was to replace " + recorded.file_name() + ", which the run recorded " + recorded_text(recorded);
    }
    throw EnvPluginError(message);
  }
  std::string message = "env plugin '" + path + "': no such file";
  if (!recorded.sha256.empty()) {
    message += " (the run recorded " + recorded.file_name() + " " + recorded_text(recorded) +
               "); pass --env-plugin PATH to load it from where it is now";
  }
  throw EnvPluginError(message);
}

}  // namespace

void record_plugin_hashes(std::vector<PluginRef>& plugins) {
  for (PluginRef& plugin : plugins) plugin.sha256 = hash_of(plugin.path, "", PluginRef{plugin.path, ""});
}

std::vector<std::string> relocate_plugins(std::vector<PluginRef>& plugins, const std::vector<std::string>& overrides) {
  std::vector<PluginRef> recorded = plugins;
  std::vector<bool> replaced(plugins.size(), false);
  std::vector<std::string> given_as(plugins.size());  // the --env-plugin text that replaced each
  for (const std::string& given : overrides) {
    PluginRef override_ref{fs::absolute(given).lexically_normal().string(), ""};
    size_t match = plugins.size();
    for (size_t i = 0; i < plugins.size(); ++i) {
      if (!replaced[i] && plugins[i].file_name() == override_ref.file_name()) match = i;
    }
    if (match == plugins.size() && plugins.size() == 1 && overrides.size() == 1) match = 0;
    if (match == plugins.size()) {
      plugins.push_back(override_ref);
      replaced.push_back(true);
      given_as.push_back(given);
      recorded.push_back(PluginRef{override_ref.path, ""});
    } else {
      plugins[match].path = override_ref.path;
      replaced[match] = true;
      given_as[match] = given;
    }
  }
  std::vector<std::string> warnings;
  for (size_t i = 0; i < plugins.size(); ++i) {
    const std::string hash = hash_of(plugins[i].path, given_as[i], recorded[i]);
    if (!recorded[i].sha256.empty() && hash != recorded[i].sha256) {
      warnings.push_back("env plugin '" + plugins[i].path + "' differs from the " + recorded[i].file_name() +
                         " the run recorded (sha256 " + hash.substr(0, 12) + "... now, " +
                         recorded[i].sha256.substr(0, 12) + "... then): its envs may behave differently");
    }
    plugins[i].sha256 = hash;
  }
  return warnings;
}

nlohmann::json plugins_to_json(const std::vector<PluginRef>& plugins) {
  nlohmann::json out = nlohmann::json::array();
  for (const PluginRef& plugin : plugins) {
    out.push_back({{"file", plugin.file_name()}, {"path", plugin.path}, {"sha256", plugin.sha256}});
  }
  return out;
}

std::vector<PluginRef> plugins_from_json(const nlohmann::json& json, const std::string& label) {
  std::vector<PluginRef> plugins;
  if (json.is_null()) return plugins;
  if (!json.is_array()) throw ConfigError(label + "'plugins' is not an array");
  for (const nlohmann::json& entry : json) {
    if (entry.is_string()) {
      plugins.push_back({entry.get<std::string>(), ""});
    } else if (entry.is_object() && entry.contains("path") && entry.at("path").is_string()) {
      const auto sha = entry.find("sha256");
      if (sha != entry.end() && !sha->is_string()) throw ConfigError(label + "a plugin's 'sha256' is not a string");
      plugins.push_back({entry.at("path").get<std::string>(), sha != entry.end() ? sha->get<std::string>() : ""});
    } else {
      throw ConfigError(label + "'plugins' holds " + entry.dump() + ", expected a path or {path, sha256}");
    }
  }
  return plugins;
}

}  // namespace rlx
