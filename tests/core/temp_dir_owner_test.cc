// The owner files of a run's temp directories, and the sweep that removes those whose process is
// gone: a dead pid, or a pid that now names another process (another start time). A live
// owner's directory, one without an owner file, and other names are left alone.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/guarded_temp_dir.h"
#include "core/temp_dir_owner.h"
#include "tests/core/test_util.h"

namespace fs = std::filesystem;

namespace {

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path owned_dir(const fs::path& parent, const std::string& name, const std::string& owner) {
  const fs::path dir = parent / name;
  fs::create_directories(dir);
  rlx::test::write_text(dir / "client.key", "secret");
  if (!owner.empty()) rlx::test::write_text(dir / rlx::kTempDirOwnerFile, owner + "\n");
  return dir;
}

}  // namespace

TEST_CASE("A GuardedTempDir names its process in its owner file", "[core][temp_dir]") {
  rlx::test::TempDir tmp;
  rlx::GuardedTempDir dir("rlx-run-", tmp.path());
  const std::string stamp = rlx::temp_dir_owner_stamp();
  CHECK(stamp.rfind(std::to_string(::getpid()) + " ", 0) == 0);
  CHECK(text_of(dir / rlx::kTempDirOwnerFile) == stamp + "\n");
}

TEST_CASE("The sweep removes the run directories of dead processes and nothing else", "[core][temp_dir]") {
  rlx::test::TempDir tmp;
  const std::string pid = std::to_string(::getpid());
  const fs::path dead = owned_dir(tmp.path(), "rlx-run-dead", "2147483646 12345");
  const fs::path reused = owned_dir(tmp.path(), "rlx-local-worker-keys-reused", pid + " 1");  // our pid, another start
  const fs::path live = owned_dir(tmp.path(), "rlx-run-live", rlx::temp_dir_owner_stamp());
  const fs::path unowned = owned_dir(tmp.path(), "rlx-run-unowned", "");
  const fs::path other = owned_dir(tmp.path(), "keys-dead", "2147483646 12345");
  const std::vector<fs::path> removed = rlx::sweep_dead_temp_dirs({tmp.path(), tmp.path()}, rlx::kRunTempDirPrefixes);
  CHECK(removed.size() == 2);
  CHECK_FALSE(fs::exists(dead));
  CHECK_FALSE(fs::exists(reused));
  CHECK(fs::exists(live / "client.key"));
  CHECK(fs::exists(unowned / "client.key"));
  CHECK(fs::exists(other / "client.key"));
}
