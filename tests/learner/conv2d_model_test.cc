// Models with conv2d layers (models/conv2d_layer.h), from an image encoder kind registered here
// (ModelSpec has no image encoder of its own yet): the layout and its initialisation, LibTorch's
// ActorCritic and QNetwork against the workers' kernels, the .rlxp file's attributes and their
// check, and python/rlx_policy.py against rlx::Policy. They live in the learner's test binary
// because rlx_models_tests expects no encoder kind but "mlp" to be registered.
#include "tests/learner/torch_catch.h"

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "core/temp_dir.h"
#include "learner/policy_networks.h"
#include "models/conv2d_layer.h"
#include "models/layer_kinds.h"
#include "models/model_spec_json.h"
#include "models/network_kernel.h"
#include "models/network_layout.h"
#include "models/policy.h"
#include "models/policy_file.h"

namespace rlx {
namespace {

// The image encoder of the models below: 6x6x2 observations, two conv layers (padded, then
// strided; 16 and 20 channels: full product blocks and the narrow path), then the MLP. Its name
// sorts after "mlp": other tests in this binary expect the known encoders to start with it.
constexpr const char* kConvEncoder = "pixels_6x6x2_test";
constexpr int64_t kImageSize = 6 * 6 * 2;

ModelSpec conv_model(ModelKind kind, const Space& actions) {
  static std::once_flag once;
  std::call_once(once, [] {
    register_encoder_kind(kConvEncoder, [](const ModelSpec& spec) {
      std::vector<EncoderLayer> layers = {
          {kConv2dLayer, 0, Activation::kRelu, Conv2dGeometry{6, 6, 2, 16, 3, 1, 1}.attributes()},
          {kConv2dLayer, 0, Activation::kRelu, Conv2dGeometry{6, 6, 16, 20, 3, 2, 0}.attributes()}};
      for (int64_t width : spec.hidden_sizes) layers.push_back({kDenseLayer, width, parse_activation(spec.activation)});
      return layers;
    });
  });
  ModelSpec spec;
  spec.kind = kind;
  spec.obs_size = kImageSize;
  spec.action_space = actions;
  spec.encoder = kConvEncoder;
  spec.hidden_sizes = {32};
  spec.activation = "relu";
  return spec;
}

// Parameters of order-one outputs: each tensor ~ N(0, 1 / fan_in).
std::vector<float> random_parameters(const std::vector<ParameterSpec>& parameters, size_t count, uint64_t seed) {
  std::vector<float> flat(count);
  Rng rng(seed);
  for (const ParameterSpec& p : parameters) {
    int64_t fan_in = 1;
    for (size_t d = 1; d < p.shape.size(); ++d) fan_in *= p.shape[d];
    for (size_t i = 0; i < p.size; ++i) flat[p.offset + i] = static_cast<float>(rng.normal() / std::sqrt(fan_in));
  }
  return flat;
}

// Output differences within 1e-5 of the outputs' largest magnitude.
void check_close(const torch::Tensor& got, const torch::Tensor& want) {
  REQUIRE(got.sizes() == want.sizes());
  const double scale = want.abs().max().item<double>();
  REQUIRE(scale > 0.1);  // outputs of order one: the comparison means something
  const double error = (got - want).abs().max().item<double>();
  INFO("largest difference " << error << ", largest output " << scale);
  CHECK(error <= 1e-5 * scale);
}

TEST_CASE("a model with conv2d layers: its layout, LibTorch's networks and the workers' kernels agree",
          "[learner][conv2d]") {
  torch::manual_seed(7);
  const int64_t rows = 6;
  const torch::Tensor obs = torch::rand({rows, kImageSize}) * 2 - 1;
  std::vector<std::string> names;

  SECTION("actor-critic") {
    const ModelSpec spec = conv_model(ModelKind::kActorCritic, Space::box({2}, -100.0f, 100.0f));
    const ActorCriticLayout layout = actor_critic_layout(spec);
    REQUIRE(layout.policy_chain.size() == 4);  // pi_0, pi_1 (conv2d), pi_2 (dense), pi_out
    const LayerSpec& conv = layout.policy_chain[1];
    CHECK(conv.kind == kConv2dLayer);
    CHECK(conv.in == 6 * 6 * 16);
    CHECK(conv.out == 2 * 2 * 20);
    CHECK(conv.init_gain == kHiddenGain);  // as the dense hidden layers
    CHECK(conv.attributes == Conv2dGeometry{6, 6, 16, 20, 3, 2, 0}.attributes());
    // initial_parameters: orthonormal weight rows times sqrt(2), zero biases.
    const std::vector<float> initial = initial_parameters(layout, 5);
    const float* w = initial.data() + conv.parameters[0].offset;
    for (int64_t i = 0; i < 20; ++i) {
      for (int64_t j = 0; j < 20; ++j) {
        double dot = 0;
        for (int64_t k = 0; k < 144; ++k) dot += double(w[i * 144 + k]) * w[j * 144 + k];
        CHECK(dot == Approx(i == j ? 2.0 : 0.0).margin(1e-5));
      }
    }
    for (size_t i = 0; i < 20; ++i) CHECK(initial[conv.parameters[1].offset + i] == 0.0f);

    ActorCritic model(spec);
    for (const ParameterSpec& p : layout.parameters) names.push_back(p.name);
    CHECK(flat_parameter_names(model) == names);
    const std::vector<float> flat = random_parameters(layout.parameters, layout.num_parameters, 3);
    model.load_flat_parameters(flat.data(), flat.size());
    const PolicyOutput want = model.forward(obs);
    ActorCriticKernel kernel(layout);
    kernel.load(flat.data());
    std::vector<float> means(rows * 2), values(rows);
    kernel.forward(obs.contiguous().data_ptr<float>(), rows, means.data(), values.data());
    check_close(torch::from_blob(means.data(), {rows, 2}), want.policy.detach());
    check_close(torch::from_blob(values.data(), {rows}), want.value.detach());
    // Autograd reaches the conv layers' parameters.
    (want.policy.pow(2).sum() + want.value.sum()).backward();
    for (const auto& named : model.named_parameters()) {
      if (named.key().find("_1.") == std::string::npos) continue;  // pi_1, vf_1: the strided conv layers
      INFO(named.key());
      CHECK(named.value().grad().abs().sum().item<double>() > 0.0);
    }
  }
  SECTION("Q-network") {
    const ModelSpec spec = conv_model(ModelKind::kQNetwork, Space::discrete(5));
    const QNetworkLayout layout = q_network_layout(spec);
    REQUIRE(layout.trunk.size() == 3);
    CHECK(layout.trunk[0].kind == kConv2dLayer);
    QNetwork model(spec);
    for (const ParameterSpec& p : layout.parameters) names.push_back(p.name);
    CHECK(flat_parameter_names(model) == names);
    const std::vector<float> flat = random_parameters(layout.parameters, layout.num_parameters, 4);
    model.load_flat_parameters(flat.data(), flat.size());
    QNetworkKernel kernel(layout);
    kernel.load(flat.data());
    std::vector<float> q(rows * 5);
    kernel.forward(obs.contiguous().data_ptr<float>(), rows, q.data());
    check_close(torch::from_blob(q.data(), {rows, 5}), model.forward(obs).detach());
  }
}

// The .rlxp bytes with their header edited (lengths, padding and checksum redone).
std::string with_header(const std::string& bytes, const std::function<void(nlohmann::json&)>& edit) {
  uint32_t header_bytes = 0;
  std::memcpy(&header_bytes, bytes.data() + 12, 4);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(16, header_bytes));
  const size_t data_start = (16 + header_bytes + 7) / 8 * 8;
  const std::string data = bytes.substr(data_start, bytes.size() - 4 - data_start);
  edit(header);
  const std::string text = header.dump();
  const auto length = static_cast<uint32_t>(text.size());
  std::string out = bytes.substr(0, 12) + std::string(reinterpret_cast<const char*>(&length), 4) + text;
  out.resize((out.size() + 7) / 8 * 8, '\0');
  out += data;
  const uint32_t crc = crc32_ieee(out);
  return out + std::string(reinterpret_cast<const char*>(&crc), 4);
}

std::string refusal(const std::string& bytes) {
  try {
    decode_policy_file(bytes, "conv.rlxp");
  } catch (const PolicyFileError& error) {
    return error.what();
  }
  return "";
}

PolicyFile conv_file(ModelKind kind, const Space& actions) {
  PolicyFile file;
  file.model = conv_model(kind, actions);
  file.parameters = kind == ModelKind::kActorCritic
                        ? random_parameters(actor_critic_layout(file.model).parameters,
                                            actor_critic_layout(file.model).num_parameters, 9)
                        : random_parameters(q_network_layout(file.model).parameters,
                                            q_network_layout(file.model).num_parameters, 9);
  file.algorithm = kind == ModelKind::kActorCritic ? "PPO" : "DQN";
  file.env_id = "Pixels-v0";
  return file;
}

TEST_CASE("conv2d attributes survive the .rlxp round trip, and a tampered one is refused by name", "[learner][conv2d]") {
  const PolicyFile file = conv_file(ModelKind::kActorCritic, Space::discrete(3));
  const std::string bytes = encode_policy_file(file);
  const PolicyFile back = decode_policy_file(bytes, "conv.rlxp");
  CHECK(back.model == file.model);
  CHECK(back.parameters == file.parameters);
  CHECK(model_spec_from_json(model_spec_to_json(file.model)) == file.model);
  with_header(bytes, [](nlohmann::json& header) {
    const nlohmann::json& layer = header.at("chains").at("policy").at(1);
    CHECK(layer.at("kind") == "conv2d");
    CHECK(layer.at("attributes") == nlohmann::json({{"height", 6}, {"width", 6}, {"in_channels", 16}, {"out_channels", 20},
                                                    {"kernel", 3}, {"stride", 2}, {"padding", 0}}));
    CHECK(header.at("chains").at("policy").at(2).count("attributes") == 0);  // dense layers have none
  });
  CHECK(refusal(with_header(bytes, [](nlohmann::json&) {})).empty());

  CHECK_THAT(refusal(with_header(bytes, [](nlohmann::json& h) { h["chains"]["policy"][1]["attributes"]["stride"] = 3; })),
             Catch::StartsWith("conv.rlxp: its \"chains\" differ from the network rlx builds for its model") &&
                 Catch::EndsWith(": chain \"policy\" layer 1 (\"pi_1\"): attribute \"stride\" is 3 in the file, 2 in the model"));
  CHECK_THAT(refusal(with_header(bytes, [](nlohmann::json& h) { h["chains"]["value"][0]["attributes"].erase("kernel"); })),
             Catch::EndsWith("chain \"value\" layer 0 (\"vf_0\"): attribute \"kernel\" is missing in the file, 3 in the model"));
  CHECK_THAT(refusal(with_header(bytes, [](nlohmann::json& h) { h["chains"]["policy"][0]["attributes"]["dilation"] = 2; })),
             Catch::EndsWith("chain \"policy\" layer 0 (\"pi_0\"): attribute \"dilation\" is 2 in the file, not in the model"));
  CHECK_THAT(refusal(with_header(bytes, [](nlohmann::json& h) { h["chains"]["policy"][0].erase("attributes"); })),
             Catch::EndsWith("chain \"policy\" layer 0 (\"pi_0\"): the file lacks \"attributes\""));
  CHECK_THAT(refusal(with_header(bytes, [](nlohmann::json& h) { h["chains"]["policy"][2]["out"] = 33; })),
             Catch::EndsWith("chain \"policy\" layer 2 (\"pi_2\"): \"out\" is 33 in the file, 32 in the model"));
}

// Runs python/rlx_policy.py with Debian's Python (it has NumPy); returns its exit status, and its
// output in `output`.
int run_python_reader(const std::string& args, const TempDir& dir, std::string& output) {
  const std::string out = (dir / "python.out").string();
  const std::string command = std::string(RLX_SYSTEM_PYTHON) + " " + RLX_SOURCE_DIR + "/python/rlx_policy.py " + args +
                              " > " + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(out);
  output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_CASE("the NumPy reader runs conv2d layers as rlx::Policy does, and refuses unknown kinds by name",
          "[learner][conv2d][export]") {
  TempDir dir("rlx-conv2d-");
  const Space box = Space::box({2}, -100.0f, 100.0f);  // wide: the comparison sees the unclipped means
  for (const auto& [kind, actions] : {std::pair<ModelKind, Space>{ModelKind::kActorCritic, box},
                                      {ModelKind::kQNetwork, Space::discrete(5)}}) {
    SECTION(model_kind_name(kind)) {
      const std::string bytes = encode_policy_file(conv_file(kind, actions));
      const std::string path = (dir / "conv.rlxp").string();
      std::ofstream(path, std::ios::binary) << bytes;
      // rlx::Policy's deterministic actions, as an `rlx evaluate --trace` file.
      Policy policy(path);
      Rng rng(11);
      std::ofstream trace(dir / "trace.jsonl");
      std::vector<int64_t> indices;
      for (int step = 0; step < 40; ++step) {
        std::vector<float> obs(kImageSize);
        for (float& v : obs) v = static_cast<float>(rng.uniform(-1.0, 1.0));
        const PolicyAction action = policy.act(obs, true);
        const nlohmann::json taken = actions.is_discrete() ? nlohmann::json(action.index) : nlohmann::json(action.values);
        trace << nlohmann::json({{"episode", 0}, {"step", step}, {"obs", obs}, {"action", taken}}).dump() << "\n";
        if (actions.is_discrete()) indices.push_back(action.index);
      }
      trace.close();
      if (actions.is_discrete()) CHECK(std::set<int64_t>(indices.begin(), indices.end()).size() > 1);
      std::string output;
      const std::string check = path + " --check-trace " + (dir / "trace.jsonl").string() + " --atol 1e-5";
      const int status = run_python_reader(check, dir, output);
      INFO(output);
      REQUIRE(status == 0);
      const nlohmann::json summary = nlohmann::json::parse(output.substr(output.rfind('{')));
      CHECK(summary.at("steps") == 40);
      CHECK(summary.at("mismatches") == 0);

      // A kind the reader does not know (its first conv layer renamed).
      const bool q_network = kind == ModelKind::kQNetwork;
      std::ofstream(path, std::ios::binary) << with_header(bytes, [&](nlohmann::json& h) {
        h["chains"][q_network ? "trunk" : "policy"][0]["kind"] = "conv3d";
      });
      CHECK(run_python_reader(check, dir, output) == 2);
      CHECK_THAT(output, Catch::Contains(std::string("layer ") + (q_network ? "q_0" : "pi_0") +
                                         " is of kind 'conv3d', which this reader cannot run (it runs the kinds "
                                         "conv2d, dense, gru, lstm)"));
    }
  }
}

}  // namespace
}  // namespace rlx
