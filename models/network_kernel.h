// The torch-free inference kernel: runs the networks of models/network_layout.h on batches of
// rows with weights from the flat vector, in plain C++: register-blocked loops in GCC's vector
// extension, compiled for AVX2 and for baseline x86-64 and picked at load time (both give the
// same floats), and a vectorized tanh. For the batch sizes workers run (a few to a few hundred
// rows of 64-256 units) this beats calling a BLAS, whose per-call overhead dominates there. Outputs match the
// learner's LibTorch modules to about 1e-6 (tests/models/network_kernel_test.cc checks 1e-5).
// Not thread-safe: each kernel owns its scratch buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/layer_kinds.h"
#include "models/network_layout.h"

namespace rlx {

// A dense layer's weights in the two layouts the kernel reads: W [out, in] (for narrow layers)
// and W^T [in, out] (for wide ones), and the bias [out].
struct DenseWeights {
  int64_t in = 0;
  int64_t out = 0;
  std::vector<float> weight;    // [out, in]
  std::vector<float> weight_t;  // [in, out]
  std::vector<float> bias;      // [out]

  // Copies W [out, in] (row-major) and b [out].
  void assign(const float* weight_rows, const float* bias_values, int64_t in_size, int64_t out_size);
};

// values[0..count) = activation(values) in place (tanh to about 1e-7 absolute, vectorized).
void apply_activation(float* values, int64_t count, Activation activation);

// y[rows, out] = activation(x[rows, in] W^T + b).
void dense_forward(const float* x, int64_t rows, const DenseWeights& layer, Activation activation, float* y);

// A LayerChain with its weights copied out of a flat vector (dense layers' transposed, for
// dense_forward; other kinds' as they are, for their registered forward: models/layer_kinds.h).
class ChainKernel {
 public:
  ChainKernel() = default;
  // Throws std::invalid_argument for a layer of an unregistered kind.
  explicit ChainKernel(LayerChain chain);

  // Copies this chain's weights and biases from the flat vector (which holds at least every offset).
  void load(const float* flat);
  // Runs the chain on input [rows, in]; returns its output [rows, out] (the input itself when the
  // chain is empty), valid until the next run. A chain with recurrent layers steps them: state
  // [rows, state_stride] holds each row's model state (every recurrent layer's at its
  // LayerSpec::state_offset), read and overwritten; std::logic_error when it is null.
  const float* run(const float* input, int64_t rows, float* state = nullptr, int64_t state_stride = 0);
  bool empty() const { return chain_.empty(); }
  // True when a layer of the chain is recurrent.
  bool recurrent() const { return recurrent_; }

 private:
  LayerChain chain_;
  std::vector<DenseWeights> weights_;  // per dense layer
  std::vector<const LayerKind*> kinds_;  // per layer: null for dense ones
  std::vector<int64_t> activated_;       // per layer: activated_outputs (models/layer_kinds.h)
  std::vector<int64_t> state_sizes_;     // per layer: layer_state_size (0 unless recurrent)
  bool recurrent_ = false;
  std::vector<float> layer_state_;       // [rows, a recurrent layer's state] scratch
  std::vector<std::vector<std::vector<float>>> params_;  // per layer of another kind: its parameters' values
  std::vector<std::vector<const float*>> param_pointers_;  // into params_
  std::vector<float> buffers_[2];
};

// The ActorCritic of a layout: policy outputs and values for a batch.
class ActorCriticKernel {
 public:
  explicit ActorCriticKernel(const ActorCriticLayout& layout);

  // Takes weights from a flat vector of layout.num_parameters values.
  void load(const float* flat);
  // For obs [rows, O]: writes policy outputs [rows, P] (logits or means) and values [rows]
  // (skipping the value head when values is null, unless a recurrent core there must step). A
  // recurrent model steps state [rows, layout.state_size] in place (null: std::logic_error).
  // latent, when not null, gets the policy's latent features [rows, layout.latent_size] (pi_out's input).
  void forward(const float* obs, int64_t rows, float* policy_out, float* values, float* state = nullptr,
               float* latent = nullptr);
  // Box actions: the loaded log-std ([A], or gSDE's [L, A]) and its exp; empty for Discrete actions.
  const std::vector<float>& log_std() const { return log_std_; }
  const std::vector<float>& std() const { return std_; }
  const ActorCriticLayout& layout() const { return layout_; }

 private:
  ActorCriticLayout layout_;
  ChainKernel trunk_, policy_body_, policy_out_, value_;  // the policy chain: body, then pi_out
  std::vector<float> log_std_, std_;
};

// The QNetwork of a layout: action values for a batch.
class QNetworkKernel {
 public:
  explicit QNetworkKernel(const QNetworkLayout& layout);

  // Takes weights from a flat vector of layout.num_parameters values.
  void load(const float* flat);
  // For obs [rows, O]: writes Q-values [rows, n].
  void forward(const float* obs, int64_t rows, float* q_values);
  const QNetworkLayout& layout() const { return layout_; }

 private:
  QNetworkLayout layout_;
  ChainKernel trunk_;
  std::vector<ChainKernel> heads_;
};

}  // namespace rlx
