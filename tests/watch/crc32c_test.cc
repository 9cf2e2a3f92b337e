// CRC-32C against published check values, and TensorFlow's record framing.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>

#include "watch/crc32c.h"
#include "watch/event_file_writer.h"

namespace {

uint32_t read_u32(const std::string& bytes, size_t offset) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[offset + i]);
  return value;
}

}  // namespace

TEST_CASE("crc32c matches the check values of RFC 3720 and the CRC catalogue", "[watch]") {
  const std::string digits = "123456789";
  CHECK(rlx::crc32c(digits.data(), digits.size()) == 0xE3069283u);
  const std::string zeros(32, '\0');
  CHECK(rlx::crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  const std::string ones(32, '\xFF');
  CHECK(rlx::crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
  CHECK(rlx::crc32c(nullptr, 0) == 0u);
}

TEST_CASE("masked_crc32c rotates right by 15 and adds TensorFlow's delta", "[watch]") {
  const std::string digits = "123456789";
  const uint32_t crc = 0xE3069283u;
  CHECK(rlx::masked_crc32c(digits.data(), digits.size()) == ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
}

TEST_CASE("frame_record writes length, its checksum, the data and its checksum", "[watch]") {
  const std::string data = "an event";
  const std::string record = rlx::frame_record(data);
  REQUIRE(record.size() == 8 + 4 + data.size() + 4);
  CHECK(read_u32(record, 0) == data.size());
  CHECK(read_u32(record, 4) == 0);
  CHECK(read_u32(record, 8) == rlx::masked_crc32c(record.data(), 8));
  CHECK(record.substr(12, data.size()) == data);
  CHECK(read_u32(record, 12 + data.size()) == rlx::masked_crc32c(data.data(), data.size()));
}
