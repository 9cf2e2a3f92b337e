#include <catch2/catch.hpp>

#include "core/space.h"

TEST_CASE("Box and Discrete spaces describe themselves", "[core]") {
  const rlx::Space box = rlx::Space::box({4}, -rlx::kInf, rlx::kInf);
  CHECK(box.size() == 4);
  CHECK(box.to_string() == "Box(-inf, inf, (4,), float32)");
  CHECK_FALSE(box.is_bounded());
  const rlx::Space discrete = rlx::Space::discrete(3);
  CHECK(discrete.size() == 1);
  CHECK(discrete.to_string() == "Discrete(3)");
  CHECK(rlx::Space::box({2, 3}, -1.0f, 1.0f).to_string() == "Box(-1, 1, (2, 3), float32)");
  CHECK(rlx::Space::box({2}, {-1.0f, -2.0f}, {1.0f, 2.0f}).to_string() == "Box([-1 -2], [1 2], (2,), float32)");
}

TEST_CASE("Malformed spaces are refused", "[core]") {
  CHECK_THROWS_AS(rlx::Space::discrete(0), std::invalid_argument);
  CHECK_THROWS_AS(rlx::Space::box({0}, -1.0f, 1.0f), std::invalid_argument);
  CHECK_THROWS_AS(rlx::Space::box({2}, {-1.0f}, {1.0f, 1.0f}), std::invalid_argument);
  CHECK_THROWS_AS(rlx::Space::box({1}, {2.0f}, {1.0f}), std::invalid_argument);
}
