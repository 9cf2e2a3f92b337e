#include <catch2/catch.hpp>

#include <cmath>

#include "core/rng.h"

TEST_CASE("Rng streams repeat under a seed and differ across seeds", "[core]") {
  rlx::Rng a(7), b(7), c(8);
  bool all_same_as_c = true;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next_u64();
    CHECK(x == b.next_u64());
    all_same_as_c = all_same_as_c && x == c.next_u64();
  }
  CHECK_FALSE(all_same_as_c);
}

TEST_CASE("Rng draws have the right ranges and moments", "[core]") {
  rlx::Rng rng(1);
  const int n = 200000;
  double sum = 0, sum_sq = 0, normal_sum = 0, normal_sq = 0;
  int64_t counts[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform(-0.05, 0.05);
    REQUIRE(u >= -0.05);
    REQUIRE(u < 0.05);
    sum += u;
    sum_sq += u * u;
    const int64_t k = rng.uniform_int(3);
    REQUIRE(k >= 0);
    REQUIRE(k < 3);
    ++counts[k];
    const double z = rng.normal();
    normal_sum += z;
    normal_sq += z * z;
  }
  CHECK(std::abs(sum / n) < 1e-3);
  CHECK(sum_sq / n == Approx(0.01 * 0.01 * 100 / 12.0 * 1.0).epsilon(0.02));  // var of U(-a, a) = a^2/3
  for (int64_t count : counts) CHECK(std::abs(count - n / 3.0) < 0.02 * n);
  CHECK(std::abs(normal_sum / n) < 0.01);
  CHECK(normal_sq / n == Approx(1.0).epsilon(0.02));
}
