// relocate_plugins: --env-plugin files stand in for the plugins a run recorded, and a missing one
// is an EnvPluginError that names the file given and what the run recorded.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "core/plugin_refs.h"
#include "core/sha256.h"
#include "tests/core/test_util.h"

using namespace rlx;
using Catch::Contains;
using rlx::test::error_of;
using rlx::test::TempDir;
namespace fs = std::filesystem;

namespace {

// A plugin file at `path` with `bytes`, recorded as the run would record it.
PluginRef recorded_plugin(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  rlx::test::write_text(path, bytes);
  return PluginRef{path.string(), sha256_file_hex(path)};
}

}  // namespace

TEST_CASE("An --env-plugin file that does not exist is named, with the plugin the run recorded", "[core][plugins]") {
  TempDir dir;
  std::vector<PluginRef> plugins = {recorded_plugin(dir / "old/libmaze_env.so", "maze")};
  const PluginRef recorded = plugins[0];
  const std::string given = (dir / "nothere.so").string();
  const std::string message = error_of<EnvPluginError>([&] { relocate_plugins(plugins, {given}); });
  CHECK_THAT(message, Contains("--env-plugin " + given + ": no such file"));
  CHECK_THAT(message, Contains("libmaze_env.so, which the run recorded at " + recorded.path + ", sha256 " +
                               recorded.sha256.substr(0, 12) + "..."));
  CHECK(message.find("recorded nothere.so") == std::string::npos);  // the recorded name is the recorded file's
}

TEST_CASE("An --env-plugin file given as a relative path is named as given and as resolved", "[core][plugins]") {
  TempDir dir;
  std::vector<PluginRef> plugins = {recorded_plugin(dir / "old/libmaze_env.so", "maze")};
  const std::string message = error_of<EnvPluginError>([&] { relocate_plugins(plugins, {"nothere.so"}); });
  CHECK_THAT(message, Contains("--env-plugin nothere.so: no such file (" +
                               (fs::current_path() / "nothere.so").lexically_normal().string() + ")"));
}

TEST_CASE("A recorded plugin that is missing is named, with --env-plugin suggested", "[core][plugins]") {
  TempDir dir;
  std::vector<PluginRef> plugins = {recorded_plugin(dir / "old/libmaze_env.so", "maze")};
  const PluginRef recorded = plugins[0];
  fs::remove(recorded.path);
  const std::string message = error_of<EnvPluginError>([&] { relocate_plugins(plugins, {}); });
  CHECK_THAT(message, Contains("env plugin '" + recorded.path + "': no such file (the run recorded libmaze_env.so at " +
                               recorded.path + ", sha256 " + recorded.sha256.substr(0, 12) + "...)"));
  CHECK_THAT(message, Contains("pass --env-plugin PATH"));
}

TEST_CASE("A moved plugin replaces the recorded one of its file name, with a warning when it changed",
          "[core][plugins]") {
  TempDir dir;
  std::vector<PluginRef> plugins = {recorded_plugin(dir / "old/libmaze_env.so", "maze"),
                                    recorded_plugin(dir / "old/libother.so", "other")};
  const PluginRef maze = plugins[0];
  const PluginRef moved = recorded_plugin(dir / "new/libmaze_env.so", "maze");
  CHECK(relocate_plugins(plugins, {moved.path}).empty());
  CHECK(plugins[0] == moved);
  CHECK(plugins[1].path == (dir / "old/libother.so").string());

  plugins[0] = maze;
  recorded_plugin(dir / "new/libmaze_env.so", "maze, rebuilt");
  const std::vector<std::string> warnings = relocate_plugins(plugins, {moved.path});
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Contains("env plugin '" + moved.path + "' differs from the libmaze_env.so the run recorded"));
  CHECK(plugins[0].sha256 == sha256_file_hex(moved.path));
}
