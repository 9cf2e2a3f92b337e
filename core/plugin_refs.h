// The env plugins an experiment loads, recorded by path, file name and content hash, so that a
// resumed or evaluated run can find a moved plugin (--env-plugin) and notice a changed one.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx {

// One plugin of an experiment.
struct PluginRef {
  std::string path;    // absolute, or as the user gave it
  std::string sha256;  // of the file when the run recorded it (64 hex digits); empty until then

  // The file name alone ("libmyenv.so"): what --env-plugin overrides are matched by.
  std::string file_name() const;
  bool operator==(const PluginRef& other) const { return path == other.path && sha256 == other.sha256; }
};

// The plugins' paths, in order.
std::vector<std::string> plugin_paths(const std::vector<PluginRef>& plugins);

// Plugins at `paths`, each keeping the hash `recorded` holds for the same path (else none yet).
std::vector<PluginRef> plugins_at(const std::vector<std::string>& paths, const std::vector<PluginRef>& recorded = {});

// Records each plugin's current SHA-256; EnvPluginError naming a plugin whose file is missing.
void record_plugin_hashes(std::vector<PluginRef>& plugins);

// Points recorded plugins at the files a user gives with --env-plugin (on `train --resume`,
// `evaluate`, `tune --resume`): each override replaces the recorded plugin of the same file name
// (or the only recorded plugin, when one was recorded and one is given); overrides that match
// none are added. Then every plugin's file must exist (EnvPluginError otherwise, naming the file,
// the --env-plugin text that named it, and the recorded file name, path and hash) and its hash is
// recorded anew. Returns one
// warning per plugin whose file differs from the recorded hash.
std::vector<std::string> relocate_plugins(std::vector<PluginRef>& plugins, const std::vector<std::string>& overrides);

// [{"file", "path", "sha256"}, ...] for params.yaml and checkpoints.
nlohmann::json plugins_to_json(const std::vector<PluginRef>& plugins);
// Reads plugins_to_json's form, or a list of path strings (older checkpoints); ConfigError
// prefixed with `label` on anything else.
std::vector<PluginRef> plugins_from_json(const nlohmann::json& json, const std::string& label);

}  // namespace rlx
