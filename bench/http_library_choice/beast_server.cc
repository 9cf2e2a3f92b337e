// Minimal POST /act server on Boost.Beast: asynchronous, one io thread
// (event loop), HTTP/1.1 keep-alive. Usage: beast_server PORT
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

const std::string kReply = R"({"action":1,"version":1})";

http::response<http::string_body> handle(const http::request<http::string_body>& req) {
  http::response<http::string_body> res;
  res.version(req.version());
  res.keep_alive(req.keep_alive());
  res.set(http::field::content_type, "application/json");
  if (req.method() != http::verb::post || req.target() != "/act") {
    res.result(http::status::not_found);
    res.body() = R"({"error":"not found"})";
  } else {
    auto obs = nlohmann::json::parse(req.body(), nullptr, /*allow_exceptions=*/false);
    if (obs.is_discarded() || !obs.contains("observation") || !obs["observation"].is_array()) {
      res.result(http::status::bad_request);
      res.body() = R"({"error":"bad observation"})";
    } else {
      res.result(http::status::ok);
      res.body() = kReply;
    }
  }
  res.prepare_payload();
  return res;
}

// One connection: read a request, write the reply, repeat while keep-alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket socket) : stream_(std::move(socket)) {}

  void read() {
    req_ = {};
    stream_.expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buffer_, req_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (!ec) self->write();
                     });
  }

 private:
  void write() {
    res_ = handle(req_);
    http::async_write(stream_, res_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec) return;
                        if (self->res_.keep_alive()) {
                          self->read();
                        } else {
                          beast::error_code ignored;
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                        }
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
};

void accept(tcp::acceptor& acceptor) {
  acceptor.async_accept([&acceptor](beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      socket.set_option(tcp::no_delay(true));
      std::make_shared<Session>(std::move(socket))->read();
    }
    accept(acceptor);
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: beast_server PORT\n";
    return 2;
  }
  const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
  asio::io_context ioc{1};
  tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), port});
  acceptor.listen(asio::socket_base::max_listen_connections);
  accept(acceptor);
  ioc.run();  // the one io thread
}
