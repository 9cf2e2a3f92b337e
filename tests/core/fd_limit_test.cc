// The open-file limit a learner with many workers needs: raised to the hard limit, and a clear
// error when even that is too low.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <stdexcept>

#include "core/fd_limit.h"

namespace rlx {
namespace {

TEST_CASE("the soft open-file limit is raised to the hard limit", "[core][fd_limit]") {
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
  if (before.rlim_max > 64) {  // lower the soft limit first so that raising it shows
    rlimit lowered = before;
    lowered.rlim_cur = 64;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  }
  CHECK(raise_fd_limit() == before.rlim_max);
  rlimit after{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &after) == 0);
  CHECK(after.rlim_cur == before.rlim_max);
  CHECK_NOTHROW(require_fd_limit(32, "a small run"));
}

TEST_CASE("a run that needs more descriptors than the hard limit allows says so", "[core][fd_limit]") {
  rlimit limit{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
  REQUIRE(limit.rlim_max != RLIM_INFINITY);  // a system without a limit cannot show the error
  CHECK_THROWS_WITH(require_fd_limit(static_cast<uint64_t>(limit.rlim_max) + 1, "a sampler with 5000 local workers"),
                    Catch::Contains("a sampler with 5000 local workers") && Catch::Contains("RLIMIT_NOFILE") &&
                        Catch::Contains(std::to_string(limit.rlim_max)));
}

}  // namespace
}  // namespace rlx
