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

namespace {

// A Dict of every leaf kind, nested: the space the tests below share.
rlx::Space every_kind() {
  using rlx::Space;
  return Space::dict({{"camera", Space::box({2, 2, 1}, 0, 255, rlx::ScalarType::kUint8)},
                      {"pose", Space::tuple({Space::discrete(3, -1), Space::box({2}, -1, 1)})},
                      {"buttons", Space::multi_binary({3})},
                      {"gears", Space::multi_discrete({2, 3}, {0, 1})}});
}

}  // namespace

TEST_CASE("Every Gymnasium space describes itself as Gymnasium prints it", "[core]") {
  using rlx::Space;
  CHECK(Space::discrete(3, -1).to_string() == "Discrete(3, start=-1)");
  CHECK(Space::box({84, 84, 4}, 0, 255, rlx::ScalarType::kUint8).to_string() == "Box(0, 255, (84, 84, 4), uint8)");
  CHECK(Space::multi_discrete({3, 2}).to_string() == "MultiDiscrete([3 2])");
  CHECK(Space::multi_binary({4}).to_string() == "MultiBinary(4)");
  CHECK(Space::multi_binary({2, 3}).to_string() == "MultiBinary([2 3])");
  CHECK(every_kind().to_string() ==
        "Dict('camera': Box(0, 255, (2, 2, 1), uint8), 'pose': Tuple(Discrete(3, start=-1), Box(-1, 1, (2,), float32)), "
        "'buttons': MultiBinary(3), 'gears': MultiDiscrete([2 3], start=[0 1]))");
}

TEST_CASE("Sizes follow Gymnasium: size() counts scalars, flat_size() is flatdim", "[core]") {
  const rlx::Space space = every_kind();
  CHECK(space.size() == 4 + 1 + 2 + 3 + 2);
  CHECK(space.flat_size() == 4 + 3 + 2 + 3 + (2 + 3));
  CHECK(rlx::Space::discrete(5).flat_size() == 5);
  CHECK(space.child("pose") != nullptr);
  CHECK(space.child("nope") == nullptr);
}

TEST_CASE("Malformed composite spaces are refused naming the path inside them", "[core]") {
  using rlx::Space;
  CHECK_THROWS_WITH(Space::dict({{"a", Space::discrete(2)}, {"a", Space::discrete(2)}}),
                    Catch::Contains("the key 'a' twice"));
  Space bad = every_kind();
  bad.children[1].children[0].n = 0;
  CHECK_THROWS_WITH(bad.validate("observation_space"),
                    Catch::StartsWith("observation_space['pose'][0]: Discrete space needs n > 0"));
  CHECK_THROWS_WITH(Space::box({2}, 0, 256, rlx::ScalarType::kUint8), Catch::Contains("integer bounds within [0, 255]"));
  CHECK_THROWS_WITH(Space::multi_discrete({2, 0}), Catch::Contains("every count > 0, got 0 at element 1"));
  CHECK_THROWS_WITH(Space::tuple({}), Catch::Contains("Tuple space has no subspaces"));
}
