// ZapAuthenticator: a ZAP handler (RFC 27) on inproc://zeromq.zap.01 of one context that
// accepts CURVE clients whose public key is authorized and refuses everything else:
//   ZapAuthenticator auth(context, load_client_keys(key_dir));  // key_dir/clients/*.pub
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

namespace rlx {

class ZapAuthenticator {
 public:
  // Starts the handler thread for context (which must outlive this object); throws zmq::error_t if the context already has a
  // ZAP handler, std::invalid_argument for a key that is not Z85.
  ZapAuthenticator(zmq::context_t& context, const std::vector<std::string>& authorized_public_keys);
  // Stops the handler thread and closes its socket.
  ~ZapAuthenticator();

  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  // Replaces the set of authorized Z85 public keys; throws std::invalid_argument for a bad key.
  void set_authorized_keys(const std::vector<std::string>& authorized_public_keys);

  // Handshakes accepted and refused so far.
  uint64_t accepted() const { return accepted_.load(); }
  uint64_t rejected() const { return rejected_.load(); }
  // Whether the handler thread stopped on a ZeroMQ error (e.g. its context was shut down).
  bool failed() const { return failed_.load(); }

 private:
  void run();
  void handle(std::vector<zmq::message_t>& request);
  bool authorized(const std::string& binary_key) const;

  zmq::socket_t socket_;  // bound in the constructor, used only by thread_ afterwards
  mutable std::mutex mutex_;
  std::set<std::string> keys_;  // 32-byte binary public keys
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace rlx
