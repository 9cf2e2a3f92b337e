// SHA-256 through OpenSSL's EVP interface.
#include "core/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace rlx {

struct Sha256::Context {
  EVP_MD_CTX* ctx = nullptr;
  bool finished = false;
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  context_->ctx = EVP_MD_CTX_new();
  if (!context_->ctx || EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(context_->ctx);
    throw std::runtime_error("SHA-256: OpenSSL could not set up a digest");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(context_->ctx); }

void Sha256::update(const void* data, size_t size) {
  if (context_->finished) throw std::logic_error("Sha256::update after hex_digest");
  if (size > 0 && EVP_DigestUpdate(context_->ctx, data, size) != 1) throw std::runtime_error("SHA-256: update failed");
}

std::string Sha256::hex_digest() {
  if (context_->finished) throw std::logic_error("Sha256::hex_digest called twice");
  context_->finished = true;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->ctx, digest, &length) != 1) throw std::runtime_error("SHA-256: final failed");
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
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
