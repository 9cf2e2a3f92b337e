#include "serve/http_server.h"

#include <mutex>
#include <optional>
#include <unordered_map>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "core/log.h"

namespace rlx {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

class Connection;

}  // namespace

struct HttpServer::Impl {
  ServeContext& context;
  HttpServerOptions options;
  net::io_context io{1};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work{io.get_executor()};
  tcp::acceptor acceptor{net::make_strand(io)};
  std::vector<std::thread> threads;
  std::mutex connections_mutex;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections;
  std::atomic<bool> draining{false};
  int port = 0;

  Impl(ServeContext& serve_context, HttpServerOptions server_options)
      : context(serve_context), options(std::move(server_options)), io(std::max(1, options.io_threads)) {}
  void accept();
  void refuse(tcp::socket socket);
  size_t connection_count() {
    std::lock_guard<std::mutex> lock(connections_mutex);
    return connections.size();
  }
};

namespace {

// One client connection: read a request, answer it, and again while the client keeps it alive.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HttpServer::Impl& server) : stream_(std::move(socket)), server_(server) {}
  ~Connection() {
    std::lock_guard<std::mutex> lock(server_.connections_mutex);
    server_.connections.erase(this);
  }

  void start() {
    {
      std::lock_guard<std::mutex> lock(server_.connections_mutex);
      server_.connections.emplace(this, weak_from_this());
    }
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

  // Closes the connection when it waits for a request (a drain); a busy one closes after its answer.
  void close_if_idle() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (!self->busy_) self->close();
    });
  }

 private:
  void read() {
    busy_ = false;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(server_.options.max_header_bytes));
    parser_->body_limit(server_.options.max_body_bytes);
    stream_.expires_after(server_.options.idle_timeout);
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&Connection::on_read, shared_from_this()));
  }

  void on_read(beast::error_code error, std::size_t) {
    if (error == http::error::header_limit) return refuse(431, "the request's headers are over --max-header-bytes (" + std::to_string(server_.options.max_header_bytes) + ")");
    if (error == http::error::body_limit) return refuse(413, "the request's body is over --max-body-bytes (" + std::to_string(server_.options.max_body_bytes) + ")");
    if (error && error.category() == http::make_error_code(http::error::bad_target).category() &&
        error != http::error::end_of_stream && error != http::error::partial_message) {
      return refuse(400, "malformed HTTP request: " + error.message());
    }
    if (error) return close();  // the client went, a timeout, or a drain
    busy_ = true;
    stream_.expires_never();
    const http::request<http::string_body>& request = parser_->get();
    keep_alive_ = request.keep_alive();
    HttpRequestView view;
    view.method = std::string_view(request.method_string().data(), request.method_string().size());
    view.target = std::string_view(request.target().data(), request.target().size());
    const auto header = [&request](const auto& name) {
      const auto found = request.find(name);
      return found == request.end() ? std::string_view() : std::string_view(found->value().data(), found->value().size());
    };
    view.content_type = header(http::field::content_type);
    view.authorization = header(http::field::authorization);
    view.mask_header = header("X-Rlx-Action-Mask");
    view.deterministic_header = header("X-Rlx-Deterministic");
    view.session_header = header("X-Rlx-Session");
    view.episode_start_header = header("X-Rlx-Episode-Start");
    view.body = request.body();
    view.received = std::chrono::steady_clock::now();
    handle_http(server_.context, server_.options.auth, view, server_.connection_count(),
                [self = shared_from_this()](HttpAnswer&& answer) {
                  net::post(self->stream_.get_executor(),
                            [self, answer = std::move(answer)]() mutable { self->write(std::move(answer)); });
                });
  }

  void refuse(int status, const std::string& message) {
    busy_ = true;
    keep_alive_ = false;
    write(http_error(status, message));
  }

  void write(HttpAnswer&& answer) {
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(answer.status));
    response_.set(http::field::server, "rlx");
    response_.set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) response_.set(name, value);
    response_.body() = std::move(answer.body);
    response_.keep_alive(keep_alive_ && !server_.draining.load());
    response_.prepare_payload();
    http::async_write(stream_, response_, beast::bind_front_handler(&Connection::on_write, shared_from_this()));
  }

  void on_write(beast::error_code error, std::size_t) {
    if (error || !response_.keep_alive()) return close();
    read();
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  bool keep_alive_ = true;
  bool busy_ = false;  // a request is being answered
};

}  // namespace

void HttpServer::Impl::accept() {
  acceptor.async_accept(net::make_strand(io), [this](beast::error_code error, tcp::socket socket) {
    if (error) {
      if (error == net::error::operation_aborted || !acceptor.is_open()) return;  // a drain closed it
      logger().warn("accept failed: {}", error.message());
    } else {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      if (connection_count() >= options.max_connections) {
        refuse(std::move(socket));
      } else {
        std::make_shared<Connection>(std::move(socket), *this)->start();
      }
    }
    if (!draining.load()) accept();
  });
}

void HttpServer::Impl::refuse(tcp::socket socket) {
  context.metrics().count_refused_connection();
  const HttpAnswer answer = http_error(503, "too many connections (--max-connections)");
  const std::string response =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
      "Content-Length: " + std::to_string(answer.body.size()) + "\r\n\r\n" + answer.body;
  beast::error_code ignored;
  net::write(socket, net::buffer(response), ignored);  // a fresh socket's buffer takes it whole
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

HttpServer::HttpServer(ServeContext& context, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(context, std::move(options))) {
  Impl& impl = *impl_;
  const std::string where = impl.options.host + ":" + std::to_string(impl.options.port);
  beast::error_code error;
  tcp::resolver resolver(impl.io);
  const auto endpoints = resolver.resolve(impl.options.host, std::to_string(impl.options.port), error);
  if (error || endpoints.empty()) throw std::runtime_error("cannot resolve " + where + ": " + error.message());
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  impl.acceptor.open(endpoint.protocol(), error);
  if (!error) impl.acceptor.set_option(net::socket_base::reuse_address(true), error);
  if (!error) impl.acceptor.bind(endpoint, error);
  if (!error) impl.acceptor.listen(net::socket_base::max_listen_connections, error);
  if (error) throw std::runtime_error("cannot listen on " + where + ": " + error.message());
  impl.port = impl.acceptor.local_endpoint().port();
  impl.accept();
  for (int t = 0; t < std::max(1, impl.options.io_threads); ++t) {
    impl.threads.emplace_back([&impl, t] {
      set_inline_lane(impl.options.first_inline_lane + t);
      impl.io.run();
    });
  }
}

HttpServer::~HttpServer() {
  impl_->work.reset();
  impl_->io.stop();
  for (std::thread& thread : impl_->threads) thread.join();
}

int HttpServer::port() const { return impl_->port; }

void HttpServer::start_draining() {
  Impl& impl = *impl_;
  impl.draining.store(true);
  net::post(impl.acceptor.get_executor(), [&impl] {
    beast::error_code ignored;
    impl.acceptor.close(ignored);
  });
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard<std::mutex> lock(impl.connections_mutex);
    for (auto& [pointer, weak] : impl.connections) {
      if (auto connection = weak.lock()) open.push_back(std::move(connection));
    }
  }
  for (const auto& connection : open) connection->close_if_idle();
}

size_t HttpServer::connections() const { return impl_->connection_count(); }

}  // namespace rlx
