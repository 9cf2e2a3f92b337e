// The byte-bounds checks of envs/observation_writer.h: a uint8 Box leaf with uniform bounds (with
// and without a low bound above 0) and one with per-element bounds, each caught at the element
// that leaves them; and a row without a part the observation has.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "envs/env.h"

namespace {

// Box(low, high, (n,), uint8) observations: writes `values` at every reset and step.
class BytesEnv : public rlx::Env {
 public:
  BytesEnv(std::vector<float> low, std::vector<float> high) : Env(spec_of(std::move(low), std::move(high))) {}
  std::vector<uint8_t> values;

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override { write(obs); }
  rlx::StepResult step_episode(const rlx::Action&, rlx::ObsSpan obs) override {
    write(obs);
    return {};
  }

 private:
  static rlx::EnvSpec spec_of(std::vector<float> low, std::vector<float> high) {
    rlx::EnvSpec spec;
    spec.id = "Bytes-v0";
    const auto n = static_cast<int64_t>(low.size());
    spec.observation_space = rlx::Space::box({n}, std::move(low), std::move(high), rlx::ScalarType::kUint8);
    spec.action_space = rlx::Space::discrete(2);
    return spec;
  }
  void write(rlx::ObsSpan obs) const {
    for (size_t i = 0; i < values.size(); ++i) obs.bytes()[static_cast<int64_t>(i)] = values[i];
  }
};

// What a reset of env writing `values` says: "ok", or the error's message.
std::string reset_with(BytesEnv& env, std::vector<uint8_t> values) {
  env.values = std::move(values);
  std::vector<uint8_t> out(env.values.size());
  try {
    env.reset(0, rlx::ObsRow(nullptr, out.data()));
  } catch (const rlx::EnvOutputError& error) {
    return error.what();
  }
  return "ok";
}

}  // namespace

TEST_CASE("Bytes outside uniform uint8 bounds are caught at the element, above the high and below a low above 0",
          "[envs][contract]") {
  std::vector<uint8_t> grid(40, 1);  // 40 bytes: more than one vector of 16 or 32
  BytesEnv binary(std::vector<float>(40, 0), std::vector<float>(40, 1));
  CHECK(reset_with(binary, grid) == "ok");
  grid[37] = 2;
  CHECK_THAT(reset_with(binary, grid), Catch::Contains("observation[37] is 2, outside its bounds [0, 1]"));

  BytesEnv shifted(std::vector<float>(40, 10), std::vector<float>(40, 20));
  std::vector<uint8_t> values(40, 15);
  CHECK(reset_with(shifted, values) == "ok");
  values[3] = 9;
  CHECK_THAT(reset_with(shifted, values), Catch::Contains("observation[3] is 9, outside its bounds [10, 20]"));
  values[3] = 21;
  CHECK_THAT(reset_with(shifted, values), Catch::Contains("observation[3] is 21, outside its bounds [10, 20]"));
}

TEST_CASE("Bytes outside per-element uint8 bounds are caught at the element", "[envs][contract]") {
  BytesEnv env({0, 5, 0, 100}, {255, 6, 0, 200});
  CHECK(reset_with(env, {255, 6, 0, 100}) == "ok");
  CHECK_THAT(reset_with(env, {0, 7, 0, 100}), Catch::Contains("observation[1] is 7, outside its bounds [5, 6]"));
  CHECK_THAT(reset_with(env, {0, 5, 1, 100}), Catch::Contains("observation[2] is 1, outside its bounds [0, 0]"));
  CHECK_THAT(reset_with(env, {0, 5, 0, 99}), Catch::Contains("observation[3] is 99, outside its bounds [100, 200]"));
}

TEST_CASE("A row without the byte part of an observation with bytes is refused, naming the sizes", "[envs][contract]") {
  BytesEnv env(std::vector<float>(4, 0), std::vector<float>(4, 1));
  env.values = {0, 1, 0, 1};
  std::vector<float> floats(4);
  CHECK_THROWS_WITH(env.reset(0, floats.data()),
                    Catch::Contains("an observation row without its bytes: the observation has 4 bytes") &&
                        Catch::Contains("pass ObsRow(floats, bytes)"));
}
