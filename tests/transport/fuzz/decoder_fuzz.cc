// libFuzzer target: arbitrary frames into decode_message must never crash, leak or trip UB;
// whatever it accepts must survive encode -> decode again. Build notes in CMakeLists.txt.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <variant>

#include "tests/transport/fuzz/fuzz_frames.h"
#include "transport/decode.h"
#include "transport/encode.h"

namespace {

std::vector<zmq::message_t> reencode(const rlx::Message& message, const rlx::MessageInfo& info) {
  return std::visit(
      [&](const auto& m) -> std::vector<zmq::message_t> {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, rlx::Hello>) return rlx::encode_hello(m, info.sequence);
        if constexpr (std::is_same_v<T, rlx::Heartbeat>) return rlx::encode_heartbeat(info.sender_id, info.sequence);
        if constexpr (std::is_same_v<T, rlx::SampleBatch>) {
          return rlx::encode_sample_fragment(std::make_shared<rlx::SampleBatch>(m), info.sequence);
        }
        if constexpr (std::is_same_v<T, rlx::EpisodeStats>) return rlx::encode_episode_stats(m, info.sender_id, info.sequence);
        if constexpr (std::is_same_v<T, rlx::Weights>) {
          return rlx::encode_weights(std::make_shared<rlx::Weights>(m), info.sender_id, info.sequence);
        }
        if constexpr (std::is_same_v<T, rlx::CreditGrant>) return rlx::encode_credit_grant(m, info.sender_id, info.sequence);
        if constexpr (std::is_same_v<T, rlx::Stop>) return rlx::encode_stop(info.sender_id, info.sequence);
        if constexpr (std::is_same_v<T, rlx::Join>) return rlx::encode_join(info.sender_id, info.sequence);
        if constexpr (std::is_same_v<T, rlx::Welcome>) return rlx::encode_welcome(m, info.sender_id, info.sequence);
      },
      message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static rlx::RejectCounters counters;
  rlx::DecodeLimits limits;
  limits.max_message_bytes = 1 << 20;
  std::vector<zmq::message_t> frames = rlx::split_fuzz_input(data, size);
  rlx::DecodeResult result = rlx::decode_message(frames, limits, &counters);
  if (result.ok() == result.reject.has_value()) std::abort();
  if (!result.ok()) return 0;
  if (auto* batch = std::get_if<rlx::SampleBatch>(&*result.message)) batch->validate();  // throws -> crash
  std::vector<zmq::message_t> again = reencode(*result.message, result.info);
  if (!rlx::decode_message(again, limits).ok()) std::abort();
  return 0;
}
