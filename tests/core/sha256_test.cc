#include <catch2/catch.hpp>

#include "core/sha256.h"
#include "tests/core/test_util.h"

using namespace rlx;

TEST_CASE("SHA-256 matches the standard test vectors", "[core][checkpoint]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Sha256 incremental;
  incremental.update("ab");
  incremental.update("c");
  CHECK(incremental.hex_digest() == sha256_hex("abc"));
  CHECK_THROWS_AS(incremental.hex_digest(), std::logic_error);
}

TEST_CASE("SHA-256 of a file equals that of its bytes", "[core][checkpoint]") {
  rlx::test::TempDir dir;
  std::string bytes(3 << 20, '\0');  // more than one read chunk
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  rlx::test::write_text(dir / "blob", bytes);
  CHECK(sha256_file_hex(dir / "blob") == sha256_hex(bytes));
  CHECK_THROWS_AS(sha256_file_hex(dir / "missing"), std::system_error);
}
