#include <catch2/catch.hpp>

#include <cstdlib>

#include "core/atomic_file.h"
#include "core/config_docs.h"
#include "core/config_schema.h"

// docs/config.md is generated from the schema; this keeps it from going stale.
// Regenerate with: RLX_UPDATE_DOCS=1 build/tests/rlx_core_tests "[docs]"
TEST_CASE("docs/config.md equals schema_markdown()", "[core][config][docs]") {
  const std::filesystem::path path = std::filesystem::path(RLX_SOURCE_DIR) / "docs/config.md";
  const std::string expected = rlx::schema_markdown();
  if (std::getenv("RLX_UPDATE_DOCS")) rlx::write_file_atomic(path, expected);
  REQUIRE(std::filesystem::exists(path));
  INFO("docs/config.md is stale; regenerate: RLX_UPDATE_DOCS=1 build/tests/rlx_core_tests \"[docs]\"");
  CHECK(rlx::read_file(path) == expected);
  for (const auto& key : rlx::config_schema()) CHECK(expected.find("| `" + key.name + "` |") != std::string::npos);
}
