// The "cnn" encoder kind: its presets, its filters' text, the layers it gives and how its spec
// travels (models/cnn_encoder.h, models/model_spec_json.h).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "models/cnn_encoder.h"
#include "models/conv2d_layer.h"
#include "models/model_spec_json.h"
#include "models/network_layout.h"

namespace rlx {
namespace {

ModelSpec cnn_spec(const Space& observation, std::vector<ConvFilter> filters, std::vector<int64_t> hidden) {
  EnvSpec env;
  env.id = "Pixels-v0";
  env.observation_space = observation;
  env.action_space = Space::discrete(6);
  ModelSpec spec = ModelSpec::for_env(env);
  spec.encoder = kCnnEncoder;
  spec.conv_filters = std::move(filters);
  spec.hidden_sizes = std::move(hidden);
  spec.activation = "relu";
  return spec;
}

TEST_CASE("cnn presets follow the image size: Nature CNN from 36x36, MinAtar's small one below", "[models][cnn]") {
  const CnnPreset nature = cnn_preset({84, 84, 4});
  CHECK(conv_filters_text(nature.conv_filters) == "32:8:4,64:4:2,64:3:1");
  CHECK(nature.hidden_sizes == std::vector<int64_t>{512});
  CHECK(conv_filters_text(cnn_preset({36, 36, 1}).conv_filters) == "32:8:4,64:4:2,64:3:1");
  const CnnPreset small = cnn_preset({10, 10, 4});
  CHECK(conv_filters_text(small.conv_filters) == "16:3:1");
  CHECK(small.hidden_sizes == std::vector<int64_t>{128});
  CHECK(conv_filters_text(cnn_preset({35, 84, 3}).conv_filters) == "16:3:1");
}

TEST_CASE("conv filters are read from OUT:KERNEL:STRIDE text and refused with the entry named", "[models][cnn]") {
  const std::vector<ConvFilter> filters = parse_conv_filters(" 32:8:4, 64:4:2 ");
  REQUIRE(filters.size() == 2);
  CHECK(filters[1] == ConvFilter{64, 4, 2});
  CHECK(conv_filters_text(filters) == "32:8:4,64:4:2");
  CHECK_THROWS_WITH(parse_conv_filters("32:8"), Catch::Contains("conv filter '32:8': expected OUT:KERNEL:STRIDE"));
  CHECK_THROWS_WITH(parse_conv_filters("32:0:1"), Catch::Contains("KERNEL '0' is not an integer in [1,"));
  CHECK_THROWS_WITH(parse_conv_filters("32:x:1"), Catch::Contains("conv filter '32:x:1'"));
  CHECK_THROWS_WITH(parse_conv_filters(""), Catch::Contains("no filter"));
}

TEST_CASE("the cnn encoder gives conv2d layers over the HWC image, then dense layers", "[models][cnn]") {
  const ModelSpec spec = cnn_spec(Space::box({10, 10, 4}, 0, 1, ScalarType::kUint8), {{16, 3, 1}}, {128});
  spec.validate();
  const std::vector<EncoderLayer> layers = cnn_encoder_layers(spec);
  REQUIRE(layers.size() == 2);
  CHECK(layers[0].kind == kConv2dLayer);
  CHECK(layers[0].activation == Activation::kRelu);
  CHECK(layers[0].attributes.at("height") == 10);
  CHECK(layers[0].attributes.at("in_channels") == 4);
  CHECK(layers[0].attributes.at("out_channels") == 16);
  CHECK(layers[1].kind == kDenseLayer);
  CHECK(layers[1].size == 128);
  // The actor-critic layout: conv 10x10x4 -> 8x8x16 = 1024, dense 128, then the heads.
  const ActorCriticLayout layout = actor_critic_layout(spec);
  REQUIRE(layout.policy_chain.size() == 3);
  CHECK(layout.policy_chain[0].out == 8 * 8 * 16);
  CHECK(layout.policy_chain[1].in == 1024);
  CHECK(layout.policy_chain[2].out == 6);

  // The Nature CNN on 84x84x4: 20x20x32, 9x9x64, 7x7x64 = 3136, then 512.
  const ModelSpec nature = cnn_spec(Space::box({84, 84, 4}, 0, 255, ScalarType::kUint8), cnn_preset({84, 84, 4}).conv_filters, {512});
  const ActorCriticLayout nature_layout = actor_critic_layout(nature);
  CHECK(nature_layout.policy_chain[0].out == 20 * 20 * 32);
  CHECK(nature_layout.policy_chain[2].out == 7 * 7 * 64);
  CHECK(nature_layout.policy_chain[3].out == 512);
}

TEST_CASE("a Dict's images each get the conv2d layers, which carry its other keys to the dense layers",
          "[models][cnn]") {
  const Space camera = Space::box({6, 6, 2}, 0, 255, ScalarType::kUint8);  // 72 features, 4x4x3 = 48 after a 3x3
  const Space map = Space::box({5, 5, 1}, 0, 1, ScalarType::kUint8);      // 25 features, 3x3x3 = 27 after a 3x3
  // Flatten order: camera [0, 72), level one-hot [72, 75), map [75, 100), pos [100, 102).
  const Space observation = Space::dict({{"camera", camera}, {"level", Space::discrete(3)}, {"map", map},
                                         {"pos", Space::box({2}, -1, 1)}});
  const std::vector<ImageLeaf> images = image_leaves(observation);
  REQUIRE(images.size() == 2);
  CHECK(images[0].path == "['camera']");
  CHECK(images[1].path == "['map']");
  CHECK(images[1].flat_offset == 75);
  CHECK(conv_filters_text(cnn_preset(images).conv_filters) == "16:3:1");  // any image under 36x36: the small preset
  const ModelSpec spec = cnn_spec(observation, {{3, 3, 1}, {3, 1, 1}}, {32});
  spec.validate();
  const std::vector<EncoderLayer> layers = cnn_encoder_layers(spec);
  REQUIRE(layers.size() == 5);
  const auto attribute = [&](size_t layer, const char* name) {
    const auto it = layers[layer].attributes.find(name);
    return it == layers[layer].attributes.end() ? int64_t{0} : it->second;
  };
  // camera: read at 0, the other 30 features carried; its second layer reads its first's output.
  CHECK(attribute(0, "image_offset") == 0);
  CHECK(attribute(0, "passthrough") == 30);
  CHECK(attribute(1, "image_offset") == 0);
  CHECK(attribute(1, "passthrough") == 30);
  // map: after camera's 48 features and level's 3 one-hot ones; carries those and pos.
  CHECK(attribute(2, "height") == 5);
  CHECK(attribute(2, "image_offset") == 48 + 3);
  CHECK(attribute(2, "passthrough") == 48 + 3 + 2);
  CHECK(attribute(3, "passthrough") == 53);
  CHECK(layers[4].kind == kDenseLayer);
  const ActorCriticLayout layout = actor_critic_layout(spec);
  CHECK(layout.policy_chain[0].in == 102);
  CHECK(layout.policy_chain[1].out == 48 + 30);
  CHECK(layout.policy_chain[4].in == 27 + 48 + 3 + 2);  // map's features, camera's, level, pos

  // A Tuple with one image behind a vector: the image is read where it lies.
  const std::vector<EncoderLayer> tuple = cnn_encoder_layers(
      cnn_spec(Space::tuple({Space::box({4}, -1, 1), camera}), {{3, 3, 1}}, {}));
  REQUIRE(tuple.size() == 1);
  CHECK(tuple[0].attributes.at("image_offset") == 4);
  CHECK(tuple[0].attributes.at("passthrough") == 4);
  // One image alone: no passthrough attributes, the layers as they always were.
  CHECK(cnn_encoder_layers(cnn_spec(camera, {{3, 3, 1}}, {}))[0].attributes.count("passthrough") == 0);
}

TEST_CASE("a cnn spec is refused when its observation is no image or a filter does not fit", "[models][cnn]") {
  CHECK_THROWS_WITH(cnn_spec(Space::box({16}, -1, 1), {{16, 3, 1}}, {}).validate(),
                    Catch::Contains("the cnn encoder reads images") && Catch::Contains("Box(-1, 1, (16,), float32)"));
  CHECK_THROWS_WITH(cnn_spec(Space::dict({{"a", Space::box({8, 8, 1}, 0, 1)}, {"b", Space::box({4, 5, 1}, 0, 1)}}),
                             {{4, 5, 1}}, {}).validate(),
                    Catch::Contains("conv filter 0 (4:5:1) does not fit the 4x5x1 image it reads (observation ['b'])"));
  // A board smaller than 4x4 is no image: it is read flat, and alone it leaves the cnn nothing to read.
  CHECK(image_leaves(Space::dict({{"a", Space::box({8, 8, 1}, 0, 1)}, {"b", Space::box({3, 3, 1}, 0, 1)}})).size() == 1);
  CHECK_THROWS_WITH(cnn_spec(Space::box({3, 3, 2}, 0, 1), {{2, 2, 1}}, {}).validate(),
                    Catch::Contains("at least 4x4"));
  CHECK_THROWS_WITH(cnn_spec(Space::box({10, 10, 4}, 0, 1, ScalarType::kUint8), {{16, 3, 1}, {32, 9, 1}}, {}).validate(),
                    Catch::Contains("conv filter 1 (32:9:1) does not fit the 8x8x16 image"));
  CHECK_THROWS_WITH(cnn_spec(Space::box({10, 10, 4}, 0, 1, ScalarType::kUint8), {}, {}).validate(),
                    Catch::Contains("at least one conv filter"));
  ModelSpec mlp = cnn_spec(Space::box({10, 10, 4}, 0, 1, ScalarType::kUint8), {{16, 3, 1}}, {64});
  mlp.encoder = "mlp";
  CHECK_THROWS_WITH(mlp.validate(), Catch::Contains("conv filters are for the cnn encoder"));
}

TEST_CASE("a cnn spec's filters travel in its JSON, and specs with other filters differ", "[models][cnn]") {
  const ModelSpec spec = cnn_spec(Space::box({10, 10, 4}, 0, 1, ScalarType::kUint8), {{16, 3, 1}, {8, 2, 2}}, {128});
  const nlohmann::json json = model_spec_to_json(spec);
  CHECK(json.at("encoder").at("conv_filters") == nlohmann::json::parse("[[16, 3, 1], [8, 2, 2]]"));
  CHECK(model_spec_from_json(json, "spec") == spec);
  ModelSpec other = spec;
  other.conv_filters[1].stride = 1;
  CHECK(other != spec);
  nlohmann::json bad = json;
  bad["encoder"]["conv_filters"][0] = {16, 3};
  CHECK_THROWS_WITH(model_spec_from_json(bad, "spec"), Catch::Contains("spec.encoder.conv_filters[0]: expected [out, kernel, stride]"));
  bad["encoder"]["conv_filters"][0] = {16, 0, 1};
  CHECK_THROWS_WITH(model_spec_from_json(bad, "spec"), Catch::Contains("spec.encoder.conv_filters[0][1]"));
  // An MLP spec writes no filters.
  ModelSpec mlp = spec;
  mlp.encoder = "mlp";
  mlp.conv_filters.clear();
  CHECK_FALSE(model_spec_to_json(mlp).at("encoder").contains("conv_filters"));
}

}  // namespace
}  // namespace rlx
