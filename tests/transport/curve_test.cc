// CURVE keys on disk, and the ZAP handler letting in only authorized clients (tcp loopback).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "transport/curve.h"
#include "transport/encode.h"
#include "transport/decode.h"
#include "transport/sockets.h"
#include "transport/zap_authenticator.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device random;
    path_ = fs::temp_directory_path() / ("rlx-curve-test-" + std::to_string(random()) + std::to_string(random()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST_CASE("CURVE key pairs save, load and are checked", "[transport]") {
  TempDir dir;
  const CurveKeyPair server = generate_curve_keypair();
  CHECK(is_curve_key(server.public_key));
  CHECK(is_curve_key(server.secret_key));
  save_curve_keypair(dir.path() / "server", server);
  CHECK((fs::status(dir.path() / "server.key").permissions() & fs::perms::group_read) == fs::perms::none);
  const CurveKeyPair loaded = load_server_keys(dir.path());
  CHECK(loaded.public_key == server.public_key);
  CHECK(loaded.secret_key == server.secret_key);

  fs::create_directories(dir.path() / "clients");
  const CurveKeyPair a = generate_curve_keypair(), b = generate_curve_keypair();
  save_curve_keypair(dir.path() / "clients" / "a", a);
  save_curve_keypair(dir.path() / "clients" / "b", b);
  fs::remove(dir.path() / "clients" / "b.key");  // the server only ever holds client public keys
  CHECK(load_client_keys(dir.path()) == std::vector<std::string>{a.public_key, b.public_key});
  CHECK(load_curve_public_key(dir.path() / "clients" / "a.pub") == a.public_key);

  std::ofstream(dir.path() / "clients" / "broken.pub") << "not a key\n";
  CHECK_THROWS_AS(load_client_keys(dir.path()), std::runtime_error);
  std::ofstream(dir.path() / "server.pub") << a.public_key << "\n";  // no longer matches server.key
  CHECK_THROWS_AS(load_server_keys(dir.path()), std::runtime_error);
  CHECK_THROWS_WITH(load_curve_keypair(dir.path() / "missing"),
                    "cannot read CURVE key file " + (dir.path() / "missing.key").string() + ": no such file");
  CHECK(!is_curve_key(std::string(40, '"')));
}

// Sends a heartbeat from a CURVE client with these keys; true if the server got it in time.
bool client_reaches_server(zmq::context_t& context, zmq::socket_t& server, const std::string& endpoint,
                           const CurveKeyPair& client_keys, const std::string& server_public) {
  zmq::socket_t client = make_socket(context, zmq::socket_type::dealer);
  configure_curve_client(client, client_keys, server_public);
  client.connect(endpoint);
  auto beat = encode_heartbeat(1, 1);
  if (!send_frames(client, beat, 1000ms)) return false;
  auto received = recv_frames(server, 700ms);
  if (!received) return false;
  take_identity(*received);
  return decode_message(*received).ok();
}

TEST_CASE("only clients with an authorized key can talk to a CURVE server", "[transport]") {
  TempDir keys;
  fs::create_directories(keys.path() / "clients");
  save_curve_keypair(keys.path() / "server", generate_curve_keypair());
  const CurveKeyPair authorized = generate_curve_keypair();
  const CurveKeyPair stranger = generate_curve_keypair();
  save_curve_keypair(keys.path() / "clients" / "worker-1", authorized);

  zmq::context_t context(1);
  const CurveKeyPair server_keys = load_server_keys(keys.path());
  ZapAuthenticator authenticator(context, load_client_keys(keys.path()));

  zmq::socket_t server = make_socket(context, zmq::socket_type::router);
  configure_curve_server(server, server_keys);
  const std::string endpoint = bind_endpoint(server, "tcp://127.0.0.1:*");

  CHECK(client_reaches_server(context, server, endpoint, authorized, server_keys.public_key));
  CHECK(authenticator.accepted() == 1);
  CHECK(!client_reaches_server(context, server, endpoint, stranger, server_keys.public_key));
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (authenticator.rejected() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  CHECK(authenticator.rejected() >= 1);

  authenticator.set_authorized_keys({authorized.public_key, stranger.public_key});
  CHECK(client_reaches_server(context, server, endpoint, stranger, server_keys.public_key));
  CHECK(!authenticator.failed());
}

TEST_CASE("a context has one ZAP handler at a time", "[transport]") {
  zmq::context_t context(1);
  const CurveKeyPair keys = generate_curve_keypair();
  {
    ZapAuthenticator first(context, {keys.public_key});
    CHECK_THROWS_AS(ZapAuthenticator(context, {keys.public_key}), zmq::error_t);
  }
  ZapAuthenticator again(context, {});  // the endpoint is free once the first one is gone
  CHECK_THROWS_AS(ZapAuthenticator(context, {"not a key"}), std::invalid_argument);
}

}  // namespace
}  // namespace rlx
