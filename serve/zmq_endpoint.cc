#include "serve/zmq_endpoint.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include "core/log.h"
#include "core/named_registry.h"
#include "serve/answer_encoding.h"
#include "serve/zmq_framing.h"
#include "transport/sample_receiver.h"
#include "transport/sockets.h"

namespace rlx {

ZmqEndpoint::ZmqEndpoint(ServeContext& context, ZmqEndpointOptions options) : context_(context), options_(std::move(options)) {
  if (options_.server_keys) authenticator_ = std::make_unique<ZapAuthenticator>(zmq_context_, options_.client_keys);
  SocketOptions socket_options;
  socket_options.max_message_bytes = static_cast<int64_t>(options_.max_message_bytes);
  socket_options.send_hwm = 100000;
  socket_options.recv_hwm = 100000;
  router_ = make_socket(zmq_context_, zmq::socket_type::router, socket_options);
  if (options_.server_keys) configure_curve_server(router_, *options_.server_keys);
  try {
    bound_ = bind_endpoint(router_, options_.endpoint);
  } catch (const zmq::error_t& error) {
    throw std::runtime_error("cannot bind the ZeroMQ endpoint " + options_.endpoint + ": " + error.what());
  }
  if (!options_.server_keys && !options_.allow_remote && !is_loopback_endpoint(bound_)) {
    router_.close();
    throw std::invalid_argument("refusing to serve ZeroMQ on " + bound_ +
                                " without CURVE keys: it is not a loopback address; give --zmq-keys DIR (rlx keys init DIR) or --allow-remote");
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error("rlx serve: cannot create an eventfd");
  thread_ = std::thread([this] { run(); });
}

ZmqEndpoint::~ZmqEndpoint() {
  stopping_.store(true);
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
  thread_.join();
  ::close(wake_fd_);
}

void ZmqEndpoint::run() {
  set_inline_lane(options_.inline_lane);
  std::vector<zmq::pollitem_t> items = {{router_.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, wake_fd_, ZMQ_POLLIN, 0}};
  while (true) {
    if (stopping_.load() && pending_.load() == 0) break;
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100));
    if (items[1].revents & ZMQ_POLLIN) {
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t got = ::read(wake_fd_, &count, sizeof count);
    }
    std::deque<Outgoing> ready;
    {
      std::lock_guard<std::mutex> lock(outbox_mutex_);
      ready.swap(outbox_);
    }
    for (Outgoing& message : ready) send(message);
    if (stopping_.load()) continue;  // take nothing new
    for (int taken = 0; taken < 256 && (items[0].revents & ZMQ_POLLIN); ++taken) {
      std::optional<std::vector<zmq::message_t>> frames = recv_frames(router_, std::chrono::milliseconds(0), 8);
      if (!frames) break;
      handle(*frames);
    }
  }
}

void ZmqEndpoint::handle(std::vector<zmq::message_t>& frames) {
  const auto received = std::chrono::steady_clock::now();
  std::vector<std::string> envelope;
  size_t first = 1;
  envelope.push_back(frames[0].to_string());
  if (frames.size() > 1 && frames[1].size() == 0) {  // a REQ client's delimiter
    envelope.emplace_back();
    first = 2;
  }
  ++pending_;
  const auto refuse = [&](int status, const std::string& message, const std::string& field, size_t slot) {
    context_.metrics().count_answer(slot, ServeProtocol::kZmq, status, 0.0);
    ActReply reply = error_reply(status, message, field);
    this->reply(envelope, reply, nullptr);
  };
  if (frames.size() != first + 2) {
    refuse(400, "a request is two frames (header, rows), got " + std::to_string(frames.size() - first), "frames", SIZE_MAX);
    return;
  }
  auto request = std::make_unique<ActRequest>();
  size_t slot = SIZE_MAX;
  try {
    const ZmqActHeader header = decode_act_header(frames[first].to_string_view());
    const std::optional<size_t> index = context_.slot_index(header.policy);
    if (!index) throw RequestError(404, "no policy '" + header.policy + "' (serving: " + joined_names(context_.slot_names()) + ")", "policy");
    slot = *index;
    if (context_.draining()) throw RequestError(503, "the server is shutting down");
    request->slot = slot;
    request->model = context_.slot(slot).model();
    request->received = received;
    BinaryRequestOptions options;
    options.deterministic = (header.flags & kServeFlagDeterministic) != 0;
    options.masks = (header.flags & kServeFlagMasks) != 0;
    options.episode_start = (header.flags & kServeFlagEpisodeStart) != 0;
    if (!header.session.empty()) options.session = header.session;
    decode_binary_request(frames[first + 1].to_string_view(), options, *request->model, context_.limits(), *request);
    if (request->rows != static_cast<int64_t>(header.rows)) {
      throw RequestError(400, "the header says " + std::to_string(header.rows) + " rows, the body holds " + std::to_string(request->rows),
                         "header.rows");
    }
  } catch (const RequestError& error) {
    refuse(error.status(), error.what(), error.field(), slot);
    return;
  }
  std::shared_ptr<const ServedModel> model = request->model;
  request->done = [this, envelope, model, slot, received](ActReply&& reply) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - received).count();
    context_.metrics().count_answer(slot, ServeProtocol::kZmq, reply.status, seconds);
    this->reply(envelope, reply, model);
  };
  context_.submit(std::move(request));
}

void ZmqEndpoint::reply(std::vector<std::string> envelope, const ActReply& reply, const std::shared_ptr<const ServedModel>& model) {
  Outgoing message;
  message.envelope = std::move(envelope);
  ZmqReplyHeader header;
  header.status = static_cast<uint16_t>(reply.status);
  header.version = reply.version;
  if (reply.status == 200 && model) {
    header.rows = static_cast<uint32_t>(reply.actions.size());
    message.body = binary_answer(reply, model->spaces());
  } else {
    message.body = json_error(reply.error, reply.field);
  }
  message.header = encode_reply_header(header);
  {
    std::lock_guard<std::mutex> lock(outbox_mutex_);
    outbox_.push_back(std::move(message));
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
}

void ZmqEndpoint::send(Outgoing& message) {
  std::vector<zmq::message_t> frames;
  for (const std::string& part : message.envelope) frames.emplace_back(part.data(), part.size());
  frames.emplace_back(message.header.data(), message.header.size());
  frames.emplace_back(message.body.data(), message.body.size());
  if (!send_frames(router_, frames, std::chrono::milliseconds(0))) {
    logger().warn("a ZeroMQ client's answer could not be queued (it is gone or not reading)");
  }
  --pending_;
}

}  // namespace rlx
