// tests/cluster/link_frames.cc: TCP super-frames cut into wire frames (link_frames.h).
#include "link_frames.h"

#include <endian.h>
#include <net/ethernet.h>
#include <netinet/in.h>

#include <algorithm>

namespace rlx::link {
namespace {

uint32_t sum16(const uint8_t* p, size_t n, uint32_t sum = 0) {   // ones' complement sum
  for (; n > 1; p += 2, n -= 2) sum += uint32_t{p[0]} << 8 | p[1];
  if (n) sum += uint32_t{p[0]} << 8;
  return sum;
}
uint16_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}
void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
uint32_t get32(const uint8_t* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }

}  // namespace

std::vector<Frame> segment_tcp(const Frame& super) {
  const uint8_t* f = super.bytes.data();
  const size_t len = super.bytes.size();
  const size_t mss = le16toh(super.vnet.gso_size);
  size_t l3 = 14;
  if (len < l3 + 40 || mss == 0) return {};
  uint16_t ethertype = uint16_t(f[12] << 8 | f[13]);
  if (ethertype == ETHERTYPE_VLAN) ethertype = uint16_t(f[16] << 8 | f[17]), l3 = 18;
  const bool v4 = ethertype == ETHERTYPE_IP;
  if (!v4 && ethertype != ETHERTYPE_IPV6) return {};
  const size_t l4 = v4 ? l3 + (f[l3] & 0xf) * 4 : l3 + 40;
  if ((v4 ? f[l3 + 9] : f[l3 + 6]) != IPPROTO_TCP || len < l4 + 20) return {};
  const size_t header = l4 + (f[l4 + 12] >> 4) * 4;
  if (header > len) return {};
  const uint32_t seq = get32(f + l4 + 4);
  const uint32_t ip_id = uint32_t(f[l3 + 4] << 8 | f[l3 + 5]);
  std::vector<Frame> segments;
  for (size_t offset = header; offset < len; offset += mss) {
    const size_t payload = std::min(mss, len - offset);
    const size_t index = segments.size();
    Frame& s = segments.emplace_back();
    s.bytes.assign(f, f + header);
    s.bytes.insert(s.bytes.end(), f + offset, f + offset + payload);
    uint8_t* ip = s.bytes.data() + l3;
    uint8_t* tcp = s.bytes.data() + l4;
    const size_t tcp_len = s.bytes.size() - l4;
    uint32_t pseudo = 0;
    if (v4) {
      put16(ip + 2, uint32_t(l4 - l3 + tcp_len));
      put16(ip + 4, ip_id + uint32_t(index));
      put16(ip + 10, 0);
      put16(ip + 10, fold(sum16(ip, l4 - l3)));
      pseudo = sum16(ip + 12, 8, IPPROTO_TCP + uint32_t(tcp_len));
    } else {
      put16(ip + 4, uint32_t(tcp_len));
      pseudo = sum16(ip + 8, 32, IPPROTO_TCP + uint32_t(tcp_len));
    }
    const uint32_t segment_seq = seq + uint32_t(offset - header);
    put16(tcp + 4, segment_seq >> 16);
    put16(tcp + 6, segment_seq);
    if (offset + payload < len) tcp[13] &= uint8_t(~0x09);   // FIN and PSH: the last only
    if (index > 0) tcp[13] &= uint8_t(~0x80);                // CWR: the first only
    put16(tcp + 16, 0);
    put16(tcp + 16, fold(sum16(tcp, tcp_len, pseudo)));
  }
  return segments;
}

}  // namespace rlx::link
