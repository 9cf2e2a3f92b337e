#include "transport/curve.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "core/file_read.h"

namespace rlx {

namespace {

constexpr size_t kZ85KeyChars = 40;

std::string read_key_file(const std::filesystem::path& file) {
  std::string text;
  try {
    text = read_file(file);
  } catch (const std::system_error& error) {
    throw std::runtime_error("cannot read CURVE key file " + file.string() + ": " + file_error_reason(error));
  }
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  if (!is_curve_key(text)) throw std::runtime_error("not a Z85 CURVE key: " + file.string());
  return text;
}

void write_key_file(const std::filesystem::path& file, const std::string& key, bool secret) {
  if (!is_curve_key(key)) throw std::invalid_argument("not a Z85 CURVE key, refusing to write " + file.string());
  {
    std::ofstream out(file, std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write CURVE key file " + file.string());
    out << key << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write CURVE key file " + file.string());
  }
  if (secret && ::chmod(file.c_str(), S_IRUSR | S_IWUSR) != 0) {
    throw std::runtime_error("cannot restrict permissions of " + file.string());
  }
}

std::filesystem::path with_suffix(const std::filesystem::path& stem, const char* suffix) {
  return std::filesystem::path(stem.string() + suffix);
}

}  // namespace

bool is_curve_key(const std::string& text) {
  if (text.size() != kZ85KeyChars) return false;
  std::array<uint8_t, 32> binary{};
  return zmq_z85_decode(binary.data(), text.c_str()) != nullptr;
}

CurveKeyPair generate_curve_keypair() {
  std::array<char, kZ85KeyChars + 1> public_key{}, secret_key{};
  if (zmq_curve_keypair(public_key.data(), secret_key.data()) != 0) throw zmq::error_t();
  return {public_key.data(), secret_key.data()};
}

void save_curve_keypair(const std::filesystem::path& stem, const CurveKeyPair& keys) {
  write_key_file(with_suffix(stem, ".key"), keys.secret_key, true);
  write_key_file(with_suffix(stem, ".pub"), keys.public_key, false);
}

void save_curve_public_key(const std::filesystem::path& file, const std::string& public_key) {
  write_key_file(file, public_key, false);
}

CurveKeyPair load_curve_keypair(const std::filesystem::path& stem) {
  const auto secret_file = with_suffix(stem, ".key");
  CurveKeyPair keys;
  keys.secret_key = read_key_file(secret_file);
  std::array<char, kZ85KeyChars + 1> derived{};
  if (zmq_curve_public(derived.data(), keys.secret_key.c_str()) != 0) throw zmq::error_t();
  keys.public_key = derived.data();
  const auto public_file = with_suffix(stem, ".pub");
  if (std::filesystem::exists(public_file) && read_key_file(public_file) != keys.public_key) {
    throw std::runtime_error(public_file.string() + " does not match " + secret_file.string());
  }
  return keys;
}

std::string load_curve_public_key(const std::filesystem::path& file) { return read_key_file(file); }

std::vector<std::string> load_authorized_keys(const std::filesystem::path& directory) {
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().extension() == ".pub" && entry.is_regular_file()) files.push_back(entry.path());
  }
  if (error) throw std::runtime_error("cannot list authorized keys in " + directory.string() + ": " + error.message());
  std::sort(files.begin(), files.end());
  std::vector<std::string> keys;
  for (const auto& file : files) keys.push_back(read_key_file(file));
  return keys;
}

CurveKeyPair load_server_keys(const std::filesystem::path& key_dir) { return load_curve_keypair(key_dir / "server"); }

std::vector<std::string> load_client_keys(const std::filesystem::path& key_dir) {
  return load_authorized_keys(key_dir / "clients");
}

void configure_curve_server(zmq::socket_t& socket, const CurveKeyPair& server) {
  socket.set(zmq::sockopt::curve_server, true);
  socket.set(zmq::sockopt::curve_secretkey, server.secret_key);
}

void configure_curve_client(zmq::socket_t& socket, const CurveKeyPair& client, const std::string& server_public_key) {
  socket.set(zmq::sockopt::curve_serverkey, server_public_key);
  socket.set(zmq::sockopt::curve_publickey, client.public_key);
  socket.set(zmq::sockopt::curve_secretkey, client.secret_key);
}

}  // namespace rlx
