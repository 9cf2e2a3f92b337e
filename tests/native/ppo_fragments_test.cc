// How PPO's learners stage fragments of structured observations: every row, the final and
// bootstrap observations too, is the observation flattened as the workers flatten it.
#include <catch2/catch.hpp>

#include <vector>

#include "core/observation_layout.h"
#include "native/ppo_fragments.h"

namespace rlx {
namespace {

// Dict('grid': Box(0, 255, (2,), uint8), 'level': Discrete(3, start=1)): 1 float, 2 bytes, flat 5.
Space grid_and_level() {
  return Space::dict({{"grid", Space::box({2}, 0, 255, ScalarType::kUint8)}, {"level", Space::discrete(3, 1)}});
}

// T = 2, K = 1; step 0 truncated (its final observation staged); observation i has level 1 + i % 3
// and grid bytes (10 i, 255 - 10 i).
SampleBatch fragment() {
  SampleBatch batch;
  batch.resize(2, 1, 1, 0, true, 2);
  for (int i = 0; i < 2; ++i) {
    batch.obs[i] = static_cast<float>(1 + i % 3);
    batch.obs_u8[2 * i] = static_cast<uint8_t>(10 * i);
    batch.obs_u8[2 * i + 1] = static_cast<uint8_t>(255 - 10 * i);
  }
  batch.truncated[0] = 1;
  batch.final_obs_index = {0};
  batch.final_obs = {3.0f};
  batch.final_obs_u8 = {51, 0};
  batch.bootstrap_obs = {2.0f};
  batch.bootstrap_obs_u8 = {255, 255};
  return batch;
}

}  // namespace

TEST_CASE("PPO stages structured observations flattened: samples, then final and bootstrap rows", "[native]") {
  const ObservationLayout layout = observation_layout(grid_and_level());
  const std::vector<SampleBatch> batches = {fragment()};
  const PpoRowCounts rows = count_ppo_rows(batches);
  REQUIRE(rows.samples == 2);
  REQUIRE(rows.extra == 2);
  std::vector<float> staged(static_cast<size_t>((rows.samples + rows.extra) * layout.flat_size), -1.0f);
  stage_ppo_observations(batches, rows, layout, staged.data());
  const std::vector<float> expected = {
      0.0f, 1.0f, 1, 0, 0,                  // sample 0: grid (0, 255) / 255, level 1 -> index 0
      10 / 255.0f, 245 / 255.0f, 0, 1, 0,   // sample 1: level 2
      0.2f, 0.0f, 0, 0, 1,                  // the final observation of step 0: level 3
      1.0f, 1.0f, 0, 1, 0};                 // the bootstrap observation: level 2
  REQUIRE(staged.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) CHECK(staged[i] == Approx(expected[i]).margin(1e-7));
}

TEST_CASE("PPO stages each sample's action mask from its observation's bytes", "[native]") {
  const ObservationLayout layout = observation_layout(grid_and_level(), 3);
  SampleBatch batch;
  batch.resize(1, 2, 1, 0, true, 2 + 3);
  batch.obs_u8 = {0, 0, 1, 0, 1, /* env 1 */ 0, 0, 0, 1, 1};
  std::vector<uint8_t> masks(6, 9);
  stage_ppo_masks({batch}, layout, masks.data());
  CHECK(masks == std::vector<uint8_t>{1, 0, 1, 0, 1, 1});
}

}  // namespace rlx
