#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <system_error>

#include "core/atomic_file.h"
#include "tests/core/test_util.h"

using namespace rlx;
using rlx::test::names_in;
using rlx::test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("write_file_atomic creates and replaces content, leaving no temp files", "[core][checkpoint]") {
  TempDir dir;
  const fs::path path = dir / "state.json";
  write_file_atomic(path, "first");
  CHECK(read_file(path) == "first");
  write_file_atomic(path, "second, longer content");
  CHECK(read_file(path) == "second, longer content");
  write_file_atomic(path, "");
  CHECK(read_file(path).empty());
  CHECK(names_in(dir.path()) == std::vector<std::string>{"state.json"});
  CHECK_THROWS_AS(write_file_atomic(dir / "missing-dir/x", "a"), std::system_error);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"state.json"});
  CHECK_THROWS_AS(read_file(dir / "nope"), std::system_error);
}

TEST_CASE("append_line_durable appends whole lines", "[core][results]") {
  TempDir dir;
  append_line_durable(dir / "log.jsonl", "{\"a\":1}");
  append_line_durable(dir / "log.jsonl", "{\"a\":2}");
  CHECK(read_file(dir / "log.jsonl") == "{\"a\":1}\n{\"a\":2}\n");
}

TEST_CASE("An append the disk cannot take leaves no torn line for the next append to follow", "[core][results]") {
  TempDir dir;
  const fs::path path = dir / "result.jsonl";
  append_line_durable(path, "{\"row\": 1}");
  const std::string before = read_file(path);
  {
    // A full disk, as a file size limit: the next line gets 5 of its bytes written, then EFBIG.
    const auto previous_handler = ::signal(SIGXFSZ, SIG_IGN);
    rlimit previous{};
    ::getrlimit(RLIMIT_FSIZE, &previous);
    rlimit limited = previous;
    limited.rlim_cur = before.size() + 5;
    ::setrlimit(RLIMIT_FSIZE, &limited);
    CHECK_THROWS_AS(append_line_durable(path, "{\"row\": 2, \"long\": \"enough to cross the limit\"}"), std::system_error);
    ::setrlimit(RLIMIT_FSIZE, &previous);
    ::signal(SIGXFSZ, previous_handler);
  }
  CHECK(read_file(path) == before);
  append_line_durable(path, "{\"row\": 3}");
  CHECK(read_file(path) == before + "{\"row\": 3}\n");
}

TEST_CASE("write_directory_atomic publishes complete directories and replaces old ones", "[core][checkpoint]") {
  TempDir dir;
  const fs::path target = dir / "checkpoint_000001";
  write_directory_atomic(target, [](const fs::path& temp) {
    CHECK(temp.filename().string().rfind("checkpoint_000001.tmp-", 0) == 0);
    write_file_durable(temp / "a", "old");
    write_file_durable(temp / "stale", "x");
  });
  CHECK(read_file(target / "a") == "old");
  write_directory_atomic(target, [](const fs::path& temp) { write_file_durable(temp / "a", "new"); });
  CHECK(read_file(target / "a") == "new");
  CHECK_FALSE(fs::exists(target / "stale"));
  CHECK(names_in(dir.path()) == std::vector<std::string>{"checkpoint_000001"});

  // A failing fill leaves the old directory and no temp dir.
  CHECK_THROWS_AS(write_directory_atomic(target, [](const fs::path& temp) {
                    write_file_durable(temp / "a", "broken");
                    throw std::runtime_error("disk full");
                  }),
                  std::runtime_error);
  CHECK(read_file(target / "a") == "new");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"checkpoint_000001"});
}

TEST_CASE("recover_interrupted_writes removes temp dirs and restores moved-aside ones", "[core][checkpoint]") {
  TempDir dir;
  fs::create_directory(dir / "checkpoint_000002.tmp-abc123");  // crashed while building
  fs::create_directory(dir / "checkpoint_000003.old-xyz789");  // crashed between the two renames
  rlx::test::write_text(dir / "checkpoint_000003.old-xyz789/a", "kept");
  fs::create_directory(dir / "checkpoint_000004");
  fs::create_directory(dir / "checkpoint_000004.old-qqqqqq");  // new one in place; old one left over
  rlx::test::write_text(dir / ".result.json.tmp-AbCdEf", "partial");
  recover_interrupted_writes(dir.path());
  CHECK(names_in(dir.path()) == std::vector<std::string>{"checkpoint_000003", "checkpoint_000004"});
  CHECK(read_file(dir / "checkpoint_000003/a") == "kept");
}
