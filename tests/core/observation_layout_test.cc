#include <catch2/catch.hpp>

#include <vector>

#include "core/observation_layout.h"
#include "core/space_json.h"

namespace {

rlx::Space camera_and_pose() {
  using rlx::Space;
  return Space::dict({{"camera", Space::box({2, 2, 1}, 0, 255, rlx::ScalarType::kUint8)},
                      {"pose", Space::tuple({Space::discrete(3, -1), Space::box({2}, -1, 1)})},
                      {"buttons", Space::multi_binary({3})},
                      {"gears", Space::multi_discrete({2, 3}, {0, 1})}});
}

}  // namespace

TEST_CASE("An observation stores uint8 and binary leaves as bytes, the rest as floats, in flatten order", "[core]") {
  const rlx::ObservationLayout layout = rlx::observation_layout(camera_and_pose(), 4);
  REQUIRE(layout.leaves.size() == 5);
  CHECK(layout.leaves[0].path == "['camera']");
  CHECK(layout.leaves[0].storage == rlx::LeafStorage::kBytes);
  CHECK(layout.leaves[1].path == "['pose'][0]");
  CHECK(layout.leaves[1].storage == rlx::LeafStorage::kFloats);
  CHECK(layout.leaves[3].path == "['buttons']");
  CHECK(layout.leaves[3].offset == 4);  // after the camera's 4 bytes
  CHECK(layout.float_slots == 1 + 2 + 2);
  CHECK(layout.byte_slots == 4 + 3 + 4);  // camera, buttons, then the mask
  CHECK(layout.mask_offset == 7);
  CHECK(layout.flat_size == 4 + 3 + 2 + 3 + 5);
  CHECK_FALSE(layout.flat_is_floats);
  CHECK(rlx::observation_layout(rlx::Space::box({4}, -1, 1)).flat_is_floats);
}

TEST_CASE("flatten_observations is gymnasium.spaces.flatten with uint8 scaled by its bounds", "[core]") {
  const rlx::ObservationLayout layout = rlx::observation_layout(camera_and_pose(), 4);
  // floats: pose[0] = 0 (index 1 of start -1), pose[1] = (0.5, -0.25), gears = (1, 3) (indices 1 and 2)
  const std::vector<float> floats = {0.0f, 0.5f, -0.25f, 1.0f, 3.0f};
  // bytes: camera 0, 51, 255, 102; buttons 1, 0, 1; the mask (not part of the input)
  const std::vector<uint8_t> bytes = {0, 51, 255, 102, 1, 0, 1, 1, 1, 0, 1};
  std::vector<float> flat(static_cast<size_t>(layout.flat_size), -9.0f);
  rlx::flatten_observations(layout, floats.data(), bytes.data(), 1, flat.data());
  const std::vector<float> expected = {0.0f, 0.2f, 1.0f, 0.4f,   // camera / 255
                                       0, 1, 0, 0.5f, -0.25f,    // pose: one-hot of Discrete(3, start=-1), the Box
                                       1, 0, 1,                  // buttons
                                       0, 1, 0, 0, 1};           // gears: one-hot of 1 in [0, 2), of 3 in [1, 4)
  REQUIRE(flat.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) CHECK(flat[i] == Approx(expected[i]).margin(1e-7));
}

TEST_CASE("A uint8 grid of 0/1 bounds stays 0/1 and an out-of-space Discrete value gives a zero one-hot", "[core]") {
  using rlx::Space;
  const rlx::ObservationLayout grid = rlx::observation_layout(Space::box({3}, 0, 1, rlx::ScalarType::kUint8));
  const std::vector<uint8_t> bytes = {0, 1, 1};
  std::vector<float> flat(3);
  rlx::flatten_observations(grid, nullptr, bytes.data(), 1, flat.data());
  CHECK(flat == std::vector<float>{0, 1, 1});
  const rlx::ObservationLayout discrete = rlx::observation_layout(Space::discrete(3));
  const std::vector<float> value = {7.0f};
  std::vector<float> one_hot(3, 5.0f);
  rlx::flatten_observations(discrete, value.data(), nullptr, 1, one_hot.data());
  CHECK(one_hot == std::vector<float>{0, 0, 0});
}

TEST_CASE("Every space survives JSON, Dict keys keep their order and uniform bounds are written once", "[core]") {
  const rlx::Space space = camera_and_pose();
  const nlohmann::json json = rlx::space_to_json(space);
  CHECK(json.at("spaces")[0].at("key") == "camera");
  CHECK(json.at("spaces")[0].at("space").at("low") == 0);  // one number, not four
  CHECK(rlx::space_from_json(json) == space);
  const rlx::Space pixels = rlx::Space::box({84, 84, 4}, 0, 255, rlx::ScalarType::kUint8);
  CHECK(rlx::space_to_json(pixels).dump().size() < 100);
  CHECK(rlx::space_from_json(rlx::space_to_json(pixels)) == pixels);
}

TEST_CASE("Space JSON of older files and hostile JSON are read safely", "[core]") {
  // rlx before every space wrote Box without dtype, Discrete without start, bounds as lists.
  const nlohmann::json old_box = {{"type", "Box"}, {"shape", {2}}, {"low", {-1, "-inf"}}, {"high", {1, "inf"}}};
  CHECK(rlx::space_from_json(old_box) == rlx::Space::box({2}, {-1, -rlx::kInf}, {1, rlx::kInf}));
  CHECK(rlx::space_from_json(nlohmann::json{{"type", "Discrete"}, {"n", 4}}) == rlx::Space::discrete(4));
  nlohmann::json deep = {{"type", "Discrete"}, {"n", 2}};
  for (int i = 0; i < 40; ++i) deep = {{"type", "Tuple"}, {"spaces", {deep}}};
  CHECK_THROWS_WITH(rlx::space_from_json(deep), Catch::Contains("nest deeper than"));
  const nlohmann::json huge = {{"type", "Box"}, {"shape", {1 << 20, 1 << 20}}, {"low", 0}, {"high", 1}};
  CHECK_THROWS_WITH(rlx::space_from_json(huge), Catch::Contains("too large"));
  const nlohmann::json graph = {{"type", "Dict"}, {"spaces", {{{"key", "g"}, {"space", {{"type", "Graph"}}}}}}};
  CHECK_THROWS_WITH(rlx::space_from_json(graph, "observation_space"),
                    Catch::StartsWith("observation_space['g']: space type must be") && Catch::Contains("\"Graph\""));
  const nlohmann::json short_bounds = {{"type", "Box"}, {"shape", {3}}, {"low", {0, 1}}, {"high", 1}};
  CHECK_THROWS_WITH(rlx::space_from_json(short_bounds), Catch::Contains("space.low: holds 2 bounds, expected 3"));
}
