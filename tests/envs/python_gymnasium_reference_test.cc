// rlx's model input against Gymnasium's own gymnasium.spaces.flatten: values Gymnasium 0.29.1
// sampled from real spaces (tests/data/gymnasium-spaces.json, written by
// tests/data/gymnasium_spaces_reference.py) go through a Python env (tests/envs/python/
// reference_envs.py) and the bridge into floats and bytes, and flatten_observations must give
// Gymnasium's vector, but for rlx's one documented difference: uint8 Box elements are scaled to
// (x - low) / (high - low) where Gymnasium keeps them raw.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/observation_layout.h"
#include "envs/python_env.h"
#include "envs/registry.h"

namespace {

nlohmann::json reference() {
  std::ifstream in(std::string(RLX_TEST_DATA_DIR) + "/gymnasium-spaces.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// Gymnasium's flat vector with rlx's scaling applied to the uint8 Box elements.
std::vector<double> expected_flat(const nlohmann::json& gymnasium_flat, const nlohmann::json& uint8_leaves) {
  std::vector<double> flat = gymnasium_flat.get<std::vector<double>>();
  for (const nlohmann::json& leaf : uint8_leaves) {
    const auto offset = leaf.at("flat_offset").get<size_t>();
    const auto low = leaf.at("low").get<std::vector<double>>();
    const auto high = leaf.at("high").get<std::vector<double>>();
    for (size_t i = 0; i < low.size(); ++i) flat.at(offset + i) = (flat.at(offset + i) - low[i]) / (high[i] - low[i]);
  }
  return flat;
}

}  // namespace

TEST_CASE("Observations of real Gymnasium spaces flatten as gymnasium.spaces.flatten does, uint8 Boxes scaled",
          "[envs][python]") {
  rlx::add_python_path({std::string(RLX_SOURCE_DIR) + "/tests/envs/python"});
  const nlohmann::json data = reference();
  REQUIRE(data.at("cases").size() == 6);
  for (const auto& [name, record] : data.at("cases").items()) {
    SECTION(name) {
      INFO("Gymnasium's space: " << record.at("gymnasium").get<std::string>());
      const std::string id = "python:reference_envs:" + name;
      rlx::register_python_env(id);
      auto env = rlx::global_env_registry().make(id);
      INFO("rlx's space: " << env->spec().observation_space.to_string());
      const rlx::ObservationLayout& layout = env->observation_layout();
      CHECK(layout.flat_size == record.at("flatdim").get<int64_t>());
      CHECK(env->spec().observation_space.flat_size() == record.at("flatdim").get<int64_t>());
      std::vector<float> floats(static_cast<size_t>(layout.float_slots));
      std::vector<uint8_t> bytes(static_cast<size_t>(layout.byte_slots));
      std::vector<float> flat(static_cast<size_t>(layout.flat_size));
      const nlohmann::json& flats = record.at("flat");
      for (size_t k = 0; k < flats.size(); ++k) {
        if (k == 0) {
          env->reset(0, rlx::ObsRow(floats.data(), bytes.data()));
        } else {
          env->step(rlx::Action{}, rlx::ObsRow(floats.data(), bytes.data()));
        }
        rlx::flatten_observations(layout, floats.data(), bytes.data(), 1, flat.data());
        const std::vector<double> expected = expected_flat(flats[k], record.at("uint8_leaves"));
        REQUIRE(expected.size() == flat.size());
        for (size_t i = 0; i < flat.size(); ++i) {
          INFO("sample " << k << ", flat element " << i);
          CHECK(flat[i] == Approx(expected[i]).epsilon(1e-6).margin(1e-7));
        }
      }
    }
  }
}
