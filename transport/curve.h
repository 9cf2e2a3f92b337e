// CURVE keys: generation, Z85 key files and socket configuration. A key directory holds
// server.key (secret), server.pub and clients/*.pub (the authorized client keys).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace rlx {

// A CURVE key pair as Z85 text, 40 characters each.
struct CurveKeyPair {
  std::string public_key;
  std::string secret_key;
};

// A fresh key pair; throws zmq::error_t (ENOTSUP) when libzmq lacks CURVE.
CurveKeyPair generate_curve_keypair();

// Writes stem.key (the secret, owner-only) and stem.pub; throws std::runtime_error on I/O errors.
void save_curve_keypair(const std::filesystem::path& stem, const CurveKeyPair& keys);

// Writes one Z85 public key file (e.g. DIR/clients/NAME.pub); throws std::runtime_error on I/O errors.
void save_curve_public_key(const std::filesystem::path& file, const std::string& public_key);

// Reads stem.key, derives its public key and checks it against stem.pub when that exists;
// throws std::runtime_error naming the file on a missing file or bad key.
CurveKeyPair load_curve_keypair(const std::filesystem::path& stem);

// Reads one Z85 public key file; throws std::runtime_error naming the file.
std::string load_curve_public_key(const std::filesystem::path& file);

// Every *.pub key in directory, sorted by file name; throws std::runtime_error if unreadable.
std::vector<std::string> load_authorized_keys(const std::filesystem::path& directory);

// DIR/server.key + DIR/server.pub.
CurveKeyPair load_server_keys(const std::filesystem::path& key_dir);

// DIR/clients/*.pub.
std::vector<std::string> load_client_keys(const std::filesystem::path& key_dir);

// Makes socket a CURVE server with these keys (set before bind).
void configure_curve_server(zmq::socket_t& socket, const CurveKeyPair& server);

// Makes socket a CURVE client of the server with that public key (set before connect).
void configure_curve_client(zmq::socket_t& socket, const CurveKeyPair& client, const std::string& server_public_key);

// Whether text is a well-formed Z85 CURVE key (40 characters that decode to 32 bytes).
bool is_curve_key(const std::string& text);

}  // namespace rlx
