#include <catch2/catch.hpp>

#include <openssl/sha.h>

#include <algorithm>
#include <string>

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

TEST_CASE("SHA-256 agrees with OpenSSL on every length around the block and padding edges", "[core][checkpoint]") {
  std::string bytes(4096 + 130, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  const auto openssl_hex = [](const std::string& data) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
    static const char kHex[] = "0123456789abcdef";
    std::string hex;
    for (unsigned char byte : digest) {
      hex += kHex[byte >> 4];
      hex += kHex[byte & 15];
    }
    return hex;
  };
  for (size_t length = 0; length <= 200; ++length) {
    CAPTURE(length);
    REQUIRE(sha256_hex(bytes.substr(0, length)) == openssl_hex(bytes.substr(0, length)));
  }
  CHECK(sha256_hex(bytes) == openssl_hex(bytes));
  // Fed in uneven pieces, the same digest.
  Sha256 pieces;
  for (size_t at = 0, piece = 1; at < bytes.size(); at += piece, piece = piece * 3 % 97 + 1) {
    pieces.update(bytes.data() + at, std::min(piece, bytes.size() - at));
  }
  CHECK(pieces.hex_digest() == openssl_hex(bytes));
  // FIPS 180-4's two-block example and a million 'a's.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
