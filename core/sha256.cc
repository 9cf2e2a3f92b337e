// SHA-256 as FIPS 180-4 defines it, in plain C++. rlx had it from OpenSSL, but then every
// process of the `rlx` executable (every rollout worker among them, which never hashes) loaded
// libcrypto and paid about 0.75 MB of private memory for its relocations: 750 MB across 1,000
// workers. Checkpoints are the only users; tests/core/sha256_test.cc checks this against the
// standard vectors and against OpenSSL.
#include "core/sha256.h"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace rlx {

namespace {

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// The first 32 bits of the fractional parts of the square roots of the first 8 primes.
constexpr std::array<uint32_t, 8> kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr size_t kBlockSize = 64;

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

inline uint32_t load_big_endian(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// One 64-byte block into the state (FIPS 180-4, 6.2.2).
void compress(std::array<uint32_t, 8>& state, const unsigned char* block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) w[t] = load_big_endian(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6],
           h = state[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t sigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const uint32_t choose = (e & f) ^ (~e & g);
    const uint32_t t1 = h + sigma1 + choose + kRoundConstants[static_cast<size_t>(t)] + w[t];
    const uint32_t sigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = sigma0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

}  // namespace

struct Sha256::Context {
  std::array<uint32_t, 8> state = kInitialState;
  unsigned char pending[kBlockSize] = {};  // bytes of an unfinished block
  size_t pending_size = 0;
  uint64_t total_bytes = 0;
  bool finished = false;
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, size_t size) {
  Context& c = *context_;
  if (c.finished) throw std::logic_error("Sha256::update after hex_digest");
  if (size > 0 && data == nullptr) throw std::invalid_argument("Sha256::update got a null buffer");
  const auto* bytes = static_cast<const unsigned char*>(data);
  c.total_bytes += size;
  if (c.pending_size > 0) {
    const size_t take = std::min(size, kBlockSize - c.pending_size);
    std::memcpy(c.pending + c.pending_size, bytes, take);
    c.pending_size += take;
    bytes += take;
    size -= take;
    if (c.pending_size < kBlockSize) return;
    compress(c.state, c.pending);
    c.pending_size = 0;
  }
  for (; size >= kBlockSize; bytes += kBlockSize, size -= kBlockSize) compress(c.state, bytes);
  std::memcpy(c.pending, bytes, size);
  c.pending_size = size;
}

std::string Sha256::hex_digest() {
  Context& c = *context_;
  if (c.finished) throw std::logic_error("Sha256::hex_digest called twice");
  // Padding (FIPS 180-4, 5.1.1): a 1 bit, zeros to 56 bytes mod 64, the length in bits.
  const uint64_t bit_length = c.total_bytes * 8;
  unsigned char padding[kBlockSize + 8] = {0x80};
  const size_t zeros = (c.pending_size < 56 ? 56 : 120) - c.pending_size;
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(bit_length >> (56 - 8 * i));
  update(padding, zeros);
  update(length, sizeof(length));
  c.finished = true;
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (uint32_t word : c.state) {
    for (int shift = 28; shift >= 0; shift -= 4) hex += kHex[(word >> shift) & 15];
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.hex_digest();
}

std::string sha256_file_hex(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::system_error(errno, std::generic_category(), "cannot open " + path.string());
  Sha256 hash;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash.update(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw std::system_error(EIO, std::generic_category(), "cannot read " + path.string());
  return hash.hex_digest();
}

}  // namespace rlx
