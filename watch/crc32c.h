// CRC-32C (Castagnoli), the checksum of TensorFlow's record framing, and its masked form.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rlx {

// CRC-32C of data[0..size) (reflected polynomial 0x82F63B78; "123456789" gives 0xE3069283).
uint32_t crc32c(const void* data, size_t size);

// TensorFlow's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8, of crc32c(data, size).
uint32_t masked_crc32c(const void* data, size_t size);

}  // namespace rlx
