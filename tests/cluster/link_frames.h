// tests/cluster/link_frames.h: the frames rlx_link_emulator (link_emulator.cc) carries, and
// the one change it makes to them: a TCP super-frame becomes the wire frames it stands for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rlx::link {

// struct virtio_net_hdr (<linux/virtio_net.h> is not valid C++): what an AF_PACKET socket with
// PACKET_VNET_HDR puts before each frame it receives and takes before each one it sends: whether
// the checksum is still to be done (flags, csum_start, csum_offset) and whether the frame is a
// super-frame of gso_size segments (gso_type). Little-endian.
struct VnetHeader {
  uint8_t flags, gso_type;
  uint16_t hdr_len, gso_size, csum_start, csum_offset;
};
static_assert(sizeof(VnetHeader) == 10, "virtio_net_hdr is 10 bytes");
constexpr uint8_t kGsoTcpV4 = 1, kGsoTcpV6 = 4, kGsoEcn = 0x80;   // gso_type

struct Frame {
  VnetHeader vnet{};   // what the kernel said of the frame's checksum and segmentation
  std::vector<uint8_t> bytes;   // from the Ethernet header on
};

// A TCP super-frame (gso_type TCPV4 or TCPV6; IPv6 without extension headers) as the
// MTU-sized frames the kernel's GSO would make of it: each with its own IP length and id,
// sequence number, flags and full checksums, and a zero vnet header. Empty when `super` is
// not such a frame (it is then sent whole).
std::vector<Frame> segment_tcp(const Frame& super);

}  // namespace rlx::link
