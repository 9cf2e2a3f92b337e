// Mixed precision for the LibTorch learners (the config key `precision`), as PyTorch's AMP does
// it: autocast runs each gradient step's forward pass and loss in bfloat16 or float16
// (AutocastGuard), while the weights ("master weights"), their gradients, the gradient
// all-reduce and the optimizer stay float32. The learners cast the network's outputs back to
// float32 before the numerically sensitive part (log-softmax, value loss, entropy, advantage
// normalisation, every reduction of a statistic). fp16 adds a dynamic loss scale (LossScaler,
// as torch.cuda.amp.GradScaler): fp16's 5 exponent bits lose small gradients to underflow, so
// the loss is multiplied by a large scale before backward and the gradients divided by it after.
//
// Autocast reaches autograd's ops only: the learners' hand-written backward passes
// (learner/actor_critic_backprop.h, learner/q_network_backprop.h) are float32 code, so with a
// precision other than fp32 the learners train through autograd.
//
// fp16 is CUDA's: LibTorch has no float16 matrix product on the CPU, and LibTorch 1.13's CPU
// autocast takes bfloat16 only (check_precision refuses it).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/types.h>

namespace rlx {

enum class Precision { kFp32, kBf16, kFp16 };

// The precision a config value names: "fp32", "bf16" or "fp16"; ConfigError naming the key otherwise.
Precision parse_precision(const std::string& value);
// "fp32", "bf16" or "fp16".
const char* precision_name(Precision precision);
// Throws ConfigError, naming the key, the value and the fix, when `precision` cannot run on
// `device` (fp16 on the CPU).
void check_precision(Precision precision, torch::Device device);
// The dtype autocast computes in: bfloat16, float16, or float32 for fp32.
torch::ScalarType autocast_dtype(Precision precision);
// A bfloat16 or float16 tensor (an autocast network's output) as float32; any other as it is.
torch::Tensor to_float32(const torch::Tensor& tensor);

// Autocast of the device's type (CPU or CUDA) to the precision's dtype for the guard's scope, on
// this thread; fp32 changes nothing. The destructor puts back the enabled flag, dtype and cache
// flag it found and clears autocast's cache of weights cast to the low dtype.
// Autocast's cache is off inside the guard: it keeps one low-precision copy of each weight per
// region, and a copy made under no_grad (DQN's double-Q argmax on s') has no gradient, so the
// forward with gradient that reuses it would train nothing. Casting afresh costs one cast per
// weight and use; the learners use each weight once or twice per step. And unlike torch.autocast,
// which clears its cache only when its outermost region ends, the guard clears it at every exit:
// the learners change their weights in place between guards.
// Works with LibTorch 1.13's per-device calls (set_cpu_enabled, set_autocast_gpu_dtype, ...) and
// 2.4's device-type ones (set_autocast_enabled(type, ...), set_autocast_dtype(type, ...)).
class AutocastGuard {
 public:
  // Enables autocast for device.type() to autocast_dtype(precision) unless precision is fp32.
  AutocastGuard(Precision precision, torch::Device device);
  // Restores the previous state and clears the cache (when it enabled anything).
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

  // True while this guard holds autocast on (precision other than fp32).
  bool active() const { return active_; }

 private:
  bool active_ = false;
  c10::DeviceType device_type_ = c10::DeviceType::CPU;
  bool previous_enabled_ = false;
  torch::ScalarType previous_dtype_ = torch::kFloat;
  bool previous_cache_enabled_ = true;
};

// True when autocast is on for this device type on this thread (either LibTorch API).
bool autocast_enabled(c10::DeviceType device_type);
// The dtype autocast casts to on this device type on this thread.
torch::ScalarType current_autocast_dtype(c10::DeviceType device_type);

// torch.cuda.amp.GradScaler's dynamic loss scale, its defaults GradScaler's.
struct LossScalerOptions {
  double init_scale = 65536.0;     // 2^16
  double growth_factor = 2.0;      // after growth_interval finite steps in a row
  double backoff_factor = 0.5;     // after a step with an inf or NaN gradient
  int64_t growth_interval = 2000;
  // Not GradScaler's: a non-finite gradient at a scale this low or lower is no fp16 overflow that
  // a smaller scale would cure (the loss or the weights diverged); the learner then stops as it
  // does in fp32 (NonFiniteLearnerError) instead of skipping steps for ever.
  double min_scale = 1.0;
};

// What a step does with its unscaled gradient.
enum class ScaledStep {
  kApply,     // finite: the optimizer steps
  kSkip,      // not finite, an fp16 overflow: no optimizer step, the scale backed off
  kNonFinite  // not finite and no scale to blame (disabled, or at min_scale): the fp32 error path
};

// The loss scale of one learner: a disabled scaler (fp32, bf16) scales by 1 and never skips.
// All ranks of a data-parallel learner decide from the same all-reduced gradient, so their
// scalers stay equal; the state travels in the learner's state_json (to_json / load_json).
class LossScaler {
 public:
  explicit LossScaler(bool enabled = false, LossScalerOptions options = LossScalerOptions());

  bool enabled() const { return enabled_; }
  // The current scale; 1 when disabled.
  double scale() const { return enabled_ ? scale_ : 1.0; }
  // loss * scale (the loss itself when disabled).
  torch::Tensor scale_loss(const torch::Tensor& loss) const;
  // Divides float gradients by the scale in place (the reciprocal rounded to float, exact for
  // GradScaler's powers of two); nothing when disabled.
  void unscale(const torch::Tensor& grads) const;
  // Records one step whose unscaled gradient was (not) finite and updates the scale as
  // GradScaler.update does: backoff and a reset growth count on a skip, growth after
  // growth_interval applied steps in a row (kept while the grown scale is a finite float).
  ScaledStep update(bool finite);
  // Steps skipped over the scaler's life (restored by load_json).
  int64_t skipped_steps() const { return skipped_steps_; }
  // Applied steps in a row since the last growth or skip.
  int64_t growth_tracker() const { return growth_tracker_; }

  // {"scale", "growth_tracker", "skipped_steps"}.
  nlohmann::json to_json() const;
  // Restores to_json()'s form; std::invalid_argument (nothing changed) on a malformed state.
  void load_json(const nlohmann::json& state);

 private:
  bool enabled_ = false;
  LossScalerOptions options_;
  double scale_ = 1.0;
  int64_t growth_tracker_ = 0;
  int64_t skipped_steps_ = 0;
};

}  // namespace rlx
