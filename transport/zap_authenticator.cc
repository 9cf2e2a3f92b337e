#include "transport/zap_authenticator.h"

#include <array>
#include <chrono>
#include <stdexcept>
#include <utility>

#include "transport/curve.h"
#include "transport/sockets.h"

namespace rlx {

namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr std::chrono::milliseconds kStopPoll{50};
constexpr size_t kMaxRequestFrames = 16;

std::set<std::string> decode_keys(const std::vector<std::string>& z85_keys) {
  std::set<std::string> keys;
  for (const std::string& key : z85_keys) {
    if (!is_curve_key(key)) throw std::invalid_argument("ZapAuthenticator: not a Z85 CURVE public key");
    std::array<uint8_t, 32> binary{};
    zmq_z85_decode(binary.data(), key.c_str());
    keys.emplace(reinterpret_cast<const char*>(binary.data()), binary.size());
  }
  return keys;
}

}  // namespace

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context, const std::vector<std::string>& authorized_public_keys)
    : socket_(context, zmq::socket_type::rep), keys_(decode_keys(authorized_public_keys)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind(kZapEndpoint);
  thread_ = std::thread([this] { run(); });
}

ZapAuthenticator::~ZapAuthenticator() {
  stop_.store(true);
  thread_.join();
  // Unbinding frees the endpoint now (closing alone frees it later, on libzmq's reaper thread),
  // so a new handler can take over at once. It can only fail if the context is gone already.
  zmq_unbind(socket_.handle(), kZapEndpoint);
}

void ZapAuthenticator::set_authorized_keys(const std::vector<std::string>& authorized_public_keys) {
  std::set<std::string> keys = decode_keys(authorized_public_keys);
  std::lock_guard<std::mutex> lock(mutex_);
  keys_ = std::move(keys);
}

bool ZapAuthenticator::authorized(const std::string& binary_key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return keys_.count(binary_key) > 0;
}

void ZapAuthenticator::run() {
  try {
    while (!stop_.load()) {
      std::optional<std::vector<zmq::message_t>> request = recv_frames(socket_, kStopPoll, kMaxRequestFrames);
      if (request) handle(*request);
    }
  } catch (const zmq::error_t&) {
    // The context is shutting down (ETERM) or the socket broke. The socket stays bound until
    // the destructor, so later handshakes go unanswered: the handler fails closed.
    failed_.store(true);
  }
}

void ZapAuthenticator::handle(std::vector<zmq::message_t>& request) {
  // Request: version, request id, domain, address, routing id, mechanism, credentials...
  const std::string request_id = request.size() > 1 ? request[1].to_string() : std::string();
  bool ok = request.size() >= 7 && request[0].to_string_view() == "1.0" && request[5].to_string_view() == "CURVE" &&
            request[6].size() == 32 && authorized(request[6].to_string());
  (ok ? accepted_ : rejected_).fetch_add(1);
  std::vector<zmq::message_t> reply;
  reply.emplace_back(std::string("1.0"));
  reply.emplace_back(request_id);
  reply.emplace_back(std::string(ok ? "200" : "400"));
  reply.emplace_back(std::string(ok ? "OK" : "unauthorized"));
  reply.emplace_back();  // user id
  reply.emplace_back();  // metadata
  send_frames(socket_, reply, kStopPoll);
}

}  // namespace rlx
