// The fuzzer's input format: a sequence of [u32 little-endian length][bytes] records, one per
// frame (a length past the end takes what is left), at most kMaxFuzzFrames frames.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace rlx {

constexpr size_t kMaxFuzzFrames = 40;

// Splits fuzzer input into frames.
inline std::vector<zmq::message_t> split_fuzz_input(const uint8_t* data, size_t size) {
  std::vector<zmq::message_t> frames;
  size_t at = 0;
  while (at + 4 <= size && frames.size() < kMaxFuzzFrames) {
    uint32_t length = 0;
    std::memcpy(&length, data + at, 4);
    at += 4;
    const size_t take = std::min<size_t>(length, size - at);
    frames.emplace_back(data + at, take);
    at += take;
  }
  return frames;
}

// Joins frames into fuzzer input (the inverse of split_fuzz_input).
inline std::string join_fuzz_input(const std::vector<zmq::message_t>& frames) {
  std::string out;
  for (const zmq::message_t& frame : frames) {
    const auto length = static_cast<uint32_t>(frame.size());
    out.append(reinterpret_cast<const char*>(&length), 4);
    out.append(static_cast<const char*>(frame.data()), frame.size());
  }
  return out;
}

}  // namespace rlx
