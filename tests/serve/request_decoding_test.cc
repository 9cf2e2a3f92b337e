// Requests are untrusted: serve/request_decoding.h refuses every malformed one with 400 and names
// the field at fault, and takes the well-formed ones in every form docs/serve.md gives.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "serve/request_decoding.h"
#include "serve_fixtures.h"

using rlx::test::TestPolicyKind;

namespace {

std::shared_ptr<const rlx::ServedModel> model_of(const rlx::PolicyFile& file) {
  return std::make_shared<const rlx::ServedModel>(file, "test.rlxp", "test", 1, 1, 0);
}

// The field a JSON body is refused for (and that it is refused with 400).
std::string refused_field(const rlx::ServedModel& model, const std::string& body) {
  rlx::ActRequest request;
  try {
    rlx::decode_json_request(body, model, {}, request);
  } catch (const rlx::RequestError& error) {
    INFO(error.what());
    CHECK(error.status() == 400);
    return error.field() + " | " + error.what();
  }
  FAIL("accepted: " << body);
  return "";
}

}  // namespace

TEST_CASE("A JSON request is refused with the field at fault named", "[serve][errors]") {
  const auto model = model_of(rlx::test::test_policy_file(TestPolicyKind::kDiscrete));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3]}"), Catch::StartsWith("observation | ") && Catch::Contains("array of 4"));
  CHECK_THAT(refused_field(*model, "{\"observations\": [[1, 2, 3, 4], [1, \"x\", 3, 4]]}"),
             Catch::StartsWith("observations[1][1] | ") && Catch::Contains("must be a number"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, 4], \"determinstic\": false}"),
             Catch::StartsWith("determinstic | ") && Catch::Contains("did you mean 'deterministic'"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, 4], \"action_mask\": [0, 0, 0]}"),
             Catch::StartsWith("action_mask | ") && Catch::Contains("allows no action"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, 4], \"action_mask\": [1, 0]}"),
             Catch::StartsWith("action_mask | ") && Catch::Contains("array of 3"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, 1e999]}"), Catch::Contains("number overflow"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, 1e300]}"), Catch::StartsWith("observation[3] | ") && Catch::Contains("not finite"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, NaN]}"), Catch::Contains("not valid JSON"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, 4"), Catch::Contains("not valid JSON"));
  CHECK_THAT(refused_field(*model, "[1, 2, 3, 4]"), Catch::Contains("must be a JSON object"));
  CHECK_THAT(refused_field(*model, "{}"), Catch::StartsWith("observation | ") && Catch::Contains("missing"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, 4], \"session\": \"a\"}"),
             Catch::StartsWith("session | ") && Catch::Contains("memoryless"));
  CHECK_THAT(refused_field(*model, "{\"observation\": [1, 2, 3, 4], \"deterministic\": 1}"), Catch::StartsWith("deterministic | "));

  const auto recurrent = model_of(rlx::test::test_policy_file(TestPolicyKind::kRecurrent));
  CHECK_THAT(refused_field(*recurrent, "{\"observation\": [1, 2, 3, 4]}"), Catch::StartsWith("session | ") && Catch::Contains("recurrent"));
  CHECK_THAT(refused_field(*recurrent, "{\"observations\": [[1, 2, 3, 4], [1, 2, 3, 4]], \"session\": \"s\"}"),
             Catch::StartsWith("observations | ") && Catch::Contains("one observation"));
}

TEST_CASE("Dict observations are read by key with Discrete and uint8 leaves range-checked", "[serve][errors]") {
  rlx::PolicyFile file = rlx::test::test_policy_file(TestPolicyKind::kDiscrete);
  file.model.observation_space = rlx::Space::dict(
      {{"level", rlx::Space::discrete(2, 1)}, {"pixels", rlx::Space::box({3}, 0.0f, 255.0f, rlx::ScalarType::kUint8)}});
  file.model.obs_size = file.model.observation_space.flat_size();
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(file.model);
  file.parameters.assign(layout.num_parameters, 0.01f);
  const auto model = model_of(file);
  rlx::ActRequest request;
  CHECK(rlx::decode_json_request("{\"observation\": {\"level\": 2, \"pixels\": [0, 128, 255]}}", *model, {}, request));
  CHECK(request.floats == std::vector<float>{2.0f});
  CHECK(request.bytes == std::vector<uint8_t>{0, 128, 255});
  CHECK_THAT(refused_field(*model, "{\"observation\": {\"level\": 3, \"pixels\": [0, 128, 255]}}"),
             Catch::StartsWith("observation['level'] | ") && Catch::Contains("[1, 2]"));
  CHECK_THAT(refused_field(*model, "{\"observation\": {\"level\": 1, \"pixels\": [0, 256, 255]}}"),
             Catch::StartsWith("observation['pixels'][1] | ") && Catch::Contains("[0, 255]"));
  CHECK_THAT(refused_field(*model, "{\"observation\": {\"level\": 1}}"), Catch::StartsWith("observation['pixels'] | ") && Catch::Contains("missing"));
  CHECK_THAT(refused_field(*model, "{\"observation\": {\"level\": 1, \"pixels\": [0, 1, 2], \"pixel\": 1}}"),
             Catch::StartsWith("observation['pixel'] | ") && Catch::Contains("did you mean 'pixels'"));
}

TEST_CASE("A binary request takes whole rows of finite floats and refuses the rest by row", "[serve][errors]") {
  const auto model = model_of(rlx::test::test_policy_file(TestPolicyKind::kDiscrete));
  std::vector<float> rows = {1, 2, 3, 4, 5, 6, 7, 8};
  std::string body(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(float));
  rlx::ActRequest request;
  rlx::decode_binary_request(body, {}, *model, {}, request);
  CHECK(request.rows == 2);
  CHECK(request.floats == rows);

  const auto refused = [&](const std::string& bytes, const rlx::BinaryRequestOptions& options) {
    rlx::ActRequest ignored;
    try {
      rlx::decode_binary_request(bytes, options, *model, {}, ignored);
    } catch (const rlx::RequestError& error) {
      CHECK(error.status() == 400);
      return error.field() + " | " + error.what();
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused(body.substr(0, 20), {}), Catch::StartsWith("body | ") && Catch::Contains("whole number of rows of 16 bytes"));
  rows[6] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THAT(refused(std::string(reinterpret_cast<const char*>(rows.data()), 32), {}),
             Catch::StartsWith("row 1 float 2 | ") && Catch::Contains("not finite"));
  rows[6] = 0;
  rlx::BinaryRequestOptions masked;
  masked.masks = true;
  std::string with_masks = std::string(reinterpret_cast<const char*>(rows.data()), 16) + std::string("\x01\x00\x00", 3) +
                           std::string(reinterpret_cast<const char*>(rows.data() + 4), 16) + std::string(3, '\0');
  CHECK_THAT(refused(with_masks, masked), Catch::StartsWith("row[1] | ") && Catch::Contains("allows no action"));
  with_masks[with_masks.size() - 1] = 1;
  CHECK(refused(with_masks, masked) == "accepted");
}
