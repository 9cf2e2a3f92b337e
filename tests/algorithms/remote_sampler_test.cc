// Where a run's workers connect: by default a private ipc:// socket in a directory only this
// user can open, removed with the run; a non-loopback address only with keys.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "algorithms/remote_sampler.h"

namespace rlx {
namespace {

RemoteSamplerOptions cartpole_sampler() {
  RemoteSamplerOptions options;
  options.setup.env_id = "CartPole-v1";
  options.num_local_workers = 0;  // remote workers only: nothing is started
  return options;
}

TEST_CASE("a run's worker endpoint is a private ipc socket unless told otherwise", "[algorithms][workers]") {
  std::filesystem::path dir;
  {
    RemoteSampler sampler(cartpole_sampler());
    const std::string endpoint = sampler.endpoint();
    REQUIRE(endpoint.rfind("ipc://", 0) == 0);
    dir = std::filesystem::path(endpoint.substr(6)).parent_path();
    struct stat info {};
    REQUIRE(::stat(dir.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0700);  // other users cannot reach the socket inside
    CHECK(info.st_uid == ::getuid());
    CHECK(std::filesystem::exists(std::filesystem::path(endpoint.substr(6))));
  }
  CHECK_FALSE(std::filesystem::exists(dir));  // removed with the run
}

TEST_CASE("without keys a run refuses an address that is not loopback", "[algorithms][workers]") {
  RemoteSamplerOptions options = cartpole_sampler();
  options.bind_endpoint = "tcp://0.0.0.0:*";
  CHECK_THROWS_WITH(RemoteSampler(options), Catch::Contains("not a loopback address") && Catch::Contains("--auth-keys"));
  options.bind_endpoint = "tcp://127.0.0.1:*";
  RemoteSampler loopback(options);
  CHECK(loopback.endpoint().rfind("tcp://127.0.0.1:", 0) == 0);
}

}  // namespace
}  // namespace rlx
