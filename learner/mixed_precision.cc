#include "learner/mixed_precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/config_error.h"

namespace rlx {

namespace {

void check_autocast_device(c10::DeviceType device_type) {
  if (device_type != c10::DeviceType::CPU && device_type != c10::DeviceType::CUDA) {
    throw std::invalid_argument(std::string("autocast: the learners run on cpu or cuda, not ") +
                                c10::DeviceTypeName(device_type));
  }
}

// Autocast's thread-local state of one device type (CPU or CUDA). LibTorch 2.4 made the calls
// take a device type and deprecated the per-device ones that 1.13 has.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool is_on(c10::DeviceType type) { return at::autocast::is_autocast_enabled(type); }
void turn(c10::DeviceType type, bool on) { at::autocast::set_autocast_enabled(type, on); }
torch::ScalarType dtype_of(c10::DeviceType type) { return at::autocast::get_autocast_dtype(type); }
void set_dtype(c10::DeviceType type, torch::ScalarType dtype) { at::autocast::set_autocast_dtype(type, dtype); }
#else
constexpr bool is_cuda(c10::DeviceType type) { return type == c10::DeviceType::CUDA; }
bool is_on(c10::DeviceType type) { return is_cuda(type) ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled(); }
void turn(c10::DeviceType type, bool on) { is_cuda(type) ? at::autocast::set_enabled(on) : at::autocast::set_cpu_enabled(on); }
torch::ScalarType dtype_of(c10::DeviceType type) {
  return is_cuda(type) ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void set_dtype(c10::DeviceType type, torch::ScalarType dtype) {
  is_cuda(type) ? at::autocast::set_autocast_gpu_dtype(dtype) : at::autocast::set_autocast_cpu_dtype(dtype);
}
#endif

}  // namespace

Precision parse_precision(const std::string& value) {
  if (value == "fp32") return Precision::kFp32;
  if (value == "bf16") return Precision::kBf16;
  if (value == "fp16") return Precision::kFp16;
  throw ConfigError("config key 'precision': got '" + value + "', expected \"fp32\", \"bf16\" or \"fp16\"");
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp32: break;
  }
  return "fp32";
}

void check_precision(Precision precision, torch::Device device) {
  if (precision == Precision::kFp16 && !device.is_cuda()) {
    throw ConfigError("precision: fp16 needs device: cuda, but the learner runs on " + device.str() +
                      " (LibTorch has no float16 matrix product on the CPU); on a CPU use precision: bf16");
  }
}

torch::ScalarType autocast_dtype(Precision precision) {
  switch (precision) {
    case Precision::kBf16: return torch::kBFloat16;
    case Precision::kFp16: return torch::kHalf;
    case Precision::kFp32: break;
  }
  return torch::kFloat;
}

torch::Tensor to_float32(const torch::Tensor& tensor) {
  const bool low = tensor.defined() && (tensor.scalar_type() == torch::kBFloat16 || tensor.scalar_type() == torch::kHalf);
  return low ? tensor.to(torch::kFloat) : tensor;
}

bool autocast_enabled(c10::DeviceType device_type) {
  check_autocast_device(device_type);
  return is_on(device_type);
}

torch::ScalarType current_autocast_dtype(c10::DeviceType device_type) {
  check_autocast_device(device_type);
  return dtype_of(device_type);
}

AutocastGuard::AutocastGuard(Precision precision, torch::Device device) : device_type_(device.type()) {
  if (precision == Precision::kFp32) return;
  check_precision(precision, device);
  previous_enabled_ = autocast_enabled(device_type_);
  previous_dtype_ = current_autocast_dtype(device_type_);
  previous_cache_enabled_ = at::autocast::is_autocast_cache_enabled();
  set_dtype(device_type_, autocast_dtype(precision));
  turn(device_type_, true);
  at::autocast::set_autocast_cache_enabled(false);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  at::autocast::decrement_nesting();
  at::autocast::clear_cache();
  at::autocast::set_autocast_cache_enabled(previous_cache_enabled_);
  turn(device_type_, previous_enabled_);
  set_dtype(device_type_, previous_dtype_);
}

LossScaler::LossScaler(bool enabled, LossScalerOptions options)
    : enabled_(enabled), options_(options), scale_(options.init_scale) {
  if (!(options_.init_scale > 0.0) || !(options_.growth_factor > 1.0) || !(options_.backoff_factor > 0.0) ||
      !(options_.backoff_factor < 1.0) || options_.growth_interval < 1 || !(options_.min_scale > 0.0)) {
    throw std::invalid_argument("LossScaler: needs init_scale > 0, growth_factor > 1, backoff_factor in (0, 1), "
                                "growth_interval >= 1 and min_scale > 0");
  }
}

torch::Tensor LossScaler::scale_loss(const torch::Tensor& loss) const { return enabled_ ? loss * scale_ : loss; }

void LossScaler::unscale(const torch::Tensor& grads) const {
  if (!enabled_) return;
  torch::NoGradGuard no_grad;
  grads.mul_(static_cast<double>(static_cast<float>(1.0 / scale_)));  // GradScaler: the float reciprocal
}

ScaledStep LossScaler::update(bool finite) {
  if (finite) {
    if (enabled_ && ++growth_tracker_ >= options_.growth_interval) {
      const double grown = scale_ * options_.growth_factor;
      if (std::isfinite(static_cast<float>(grown))) scale_ = grown;
      growth_tracker_ = 0;
    }
    return ScaledStep::kApply;
  }
  if (!enabled_ || scale_ <= options_.min_scale) return ScaledStep::kNonFinite;
  scale_ *= options_.backoff_factor;
  growth_tracker_ = 0;
  ++skipped_steps_;
  return ScaledStep::kSkip;
}

nlohmann::json LossScaler::to_json() const {
  return {{"scale", scale_}, {"growth_tracker", growth_tracker_}, {"skipped_steps", skipped_steps_}};
}

void LossScaler::load_json(const nlohmann::json& state) {
  const auto integer = [&state](const char* key) {
    if (!state.contains(key) || !state.at(key).is_number_integer() || state.at(key).get<int64_t>() < 0) {
      throw std::invalid_argument(std::string("loss scaler state needs a non-negative integer \"") + key + "\"");
    }
    return state.at(key).get<int64_t>();
  };
  if (!state.is_object() || !state.contains("scale") || !state.at("scale").is_number() ||
      !(state.at("scale").get<double>() > 0.0) || !std::isfinite(state.at("scale").get<double>())) {
    throw std::invalid_argument("loss scaler state needs a finite \"scale\" > 0");
  }
  const int64_t growth_tracker = integer("growth_tracker");
  const int64_t skipped = integer("skipped_steps");
  scale_ = state.at("scale").get<double>();
  growth_tracker_ = growth_tracker;
  skipped_steps_ = skipped;
}

}  // namespace rlx
