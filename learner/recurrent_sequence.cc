#include "learner/recurrent_sequence.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/network_kernel.h"
#include "native/dense_backprop.h"

namespace rlx {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Sizes of one run; every saved tensor is t-major ([T, B, ...]) so that a step's rows are contiguous.
struct SequenceDims {
  int64_t batch = 0, steps = 0, in = 0, hidden = 0, gates = 0, state = 0;
};

SequenceDims dims_of(const torch::Tensor& x, const torch::Tensor& state, const torch::Tensor& w_hh, int64_t num_steps) {
  SequenceDims d;
  d.batch = state.size(0);
  d.steps = num_steps;
  d.in = x.size(1);
  d.hidden = w_hh.size(1);
  d.gates = w_hh.size(0);
  d.state = state.size(1);
  return d;
}

// One row's gradients through the cell at one step. ds [S]: dL/d(state after the step), read;
// dgi, dgh [G]: dL/d(W_ih x + b_ih) and dL/d(W_hh h + b_hh); dprev [S]: the part of dL/d(state
// before the step) that does not pass through W_hh. gates: the activated gates the forward left.
void lstm_row_backward(int64_t hidden, const float* gates, const float* c_new, const float* c_prev, const float* ds,
                       float* tanh_c, float* dgi, float* dprev) {
  std::copy(c_new, c_new + hidden, tanh_c);
  apply_activation(tanh_c, hidden, Activation::kTanh);
  const float *i = gates, *f = gates + hidden, *g = gates + 2 * hidden, *o = gates + 3 * hidden;
  const float *dh = ds, *dc = ds + hidden;
  for (int64_t j = 0; j < hidden; ++j) {
    const float tc = tanh_c[j];
    const float d_cell = dc[j] + dh[j] * o[j] * (1.0f - tc * tc);
    dgi[j] = d_cell * g[j] * i[j] * (1.0f - i[j]);
    dgi[hidden + j] = d_cell * c_prev[j] * f[j] * (1.0f - f[j]);
    dgi[2 * hidden + j] = d_cell * i[j] * (1.0f - g[j] * g[j]);
    dgi[3 * hidden + j] = dh[j] * tc * o[j] * (1.0f - o[j]);
    dprev[j] = 0.0f;
    dprev[hidden + j] = d_cell * f[j];
  }
}

void gru_row_backward(int64_t hidden, const float* gates, const float* gh, const float* h_prev, const float* ds,
                      float* dgi, float* dgh, float* dprev) {
  const float *r = gates, *z = gates + hidden, *n = gates + 2 * hidden, *gh_new = gh + 2 * hidden;
  for (int64_t j = 0; j < hidden; ++j) {
    const float dh = ds[j];
    const float d_new = dh * (1.0f - z[j]) * (1.0f - n[j] * n[j]);
    const float d_reset = d_new * gh_new[j] * r[j] * (1.0f - r[j]);
    const float d_update = dh * (h_prev[j] - n[j]) * z[j] * (1.0f - z[j]);
    dgi[j] = dgh[j] = d_reset;
    dgi[hidden + j] = dgh[hidden + j] = d_update;
    dgi[2 * hidden + j] = d_new;
    dgh[2 * hidden + j] = d_new * r[j];
    dprev[j] = dh * z[j];
  }
}

class RecurrentSequenceFunction : public torch::autograd::Function<RecurrentSequenceFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& state,
                               const torch::Tensor& w_ih, const torch::Tensor& w_hh, const torch::Tensor& b_ih,
                               const torch::Tensor& b_hh, const torch::Tensor& keep, int64_t num_steps, bool lstm,
                               bool record_states) {
    const SequenceDims d = dims_of(x, state, w_hh, num_steps);
    const RecurrentCell cell = lstm ? RecurrentCell::kLstm : RecurrentCell::kGru;
    const torch::Tensor xt = x.view({d.batch, d.steps, d.in}).transpose(0, 1).contiguous();
    const torch::Tensor keep_t = keep.t().contiguous();
    // gates: W_ih x + b_ih of every step in one product, activated in place step by step.
    torch::Tensor gates = torch::addmm(b_ih, xt.view({d.steps * d.batch, d.in}), w_ih.t()).view({d.steps, d.batch, d.gates});
    torch::Tensor gh = torch::empty({d.steps, d.batch, d.gates}, x.options());
    torch::Tensor prev = torch::empty({d.steps, d.batch, d.state}, x.options());  // state before each step (reset applied)
    torch::Tensor post = torch::empty({d.steps, d.batch, d.state}, x.options());  // state after each step
    const torch::Tensor w_hh_c = w_hh.contiguous(), w_hh_t = w_hh.t().contiguous(), b_hh_c = b_hh.contiguous();
    const torch::Tensor start = state.contiguous();
    const int64_t rows = d.batch * d.state;
    std::vector<float> h(static_cast<size_t>(d.batch * d.hidden)), y(static_cast<size_t>(d.hidden));
    float *gate = gates.data_ptr<float>(), *gh_all = gh.data_ptr<float>(), *prev_all = prev.data_ptr<float>(),
          *post_all = post.data_ptr<float>();
    const float* keep_all = keep_t.data_ptr<float>();
    for (int64_t t = 0; t < d.steps; ++t) {
      const float* before = t == 0 ? start.data_ptr<float>() : post_all + (t - 1) * rows;
      float *p = prev_all + t * rows, *s = post_all + t * rows, *g = gate + t * d.batch * d.gates,
            *gh_t = gh_all + t * d.batch * d.gates;
      const float* k = keep_all + t * d.batch;
      for (int64_t b = 0; b < d.batch; ++b) {
        for (int64_t j = 0; j < d.state; ++j) p[b * d.state + j] = s[b * d.state + j] = before[b * d.state + j] * k[b];
        std::copy(p + b * d.state, p + b * d.state + d.hidden, h.data() + b * d.hidden);
      }
      matmul(h.data(), d.batch, d.hidden, w_hh_t.data_ptr<float>(), w_hh_c.data_ptr<float>(), d.gates,
             b_hh_c.data_ptr<float>(), gh_t);
      for (int64_t b = 0; b < d.batch; ++b) {
        recurrent_cell_update(cell, d.hidden, g + b * d.gates, gh_t + b * d.gates, s + b * d.state, y.data());
      }
    }
    ctx->save_for_backward({xt, w_ih, w_hh, gates, gh, prev, post, keep_t});
    ctx->saved_data["lstm"] = lstm;
    const torch::Tensor outputs = post.narrow(2, 0, d.hidden).transpose(0, 1).reshape({d.batch * d.steps, d.hidden});
    const torch::Tensor final_state = post[d.steps - 1].clone();
    const torch::Tensor states_after = record_states ? post.transpose(0, 1).contiguous() : torch::empty({0}, x.options());
    ctx->mark_non_differentiable({states_after});
    return {outputs, final_state, states_after};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &xt = saved[0], &w_ih = saved[1], &w_hh = saved[2], &gates = saved[3], &gh = saved[4],
                        &prev = saved[5], &post = saved[6], &keep_t = saved[7];
    const bool lstm = ctx->saved_data["lstm"].toBool();
    const int64_t steps = xt.size(0), batch = xt.size(1), in = xt.size(2), hidden = w_hh.size(1), g = w_hh.size(0),
                  s = prev.size(2);
    const torch::Tensor dy = grads[0].view({batch, steps, hidden}).transpose(0, 1).contiguous();
    torch::Tensor ds = grads[1].contiguous().clone();  // dL/d(state after step t), walking back
    torch::Tensor dgi = torch::empty({steps, batch, g}, xt.options());
    torch::Tensor dgh = lstm ? dgi : torch::empty({steps, batch, g}, xt.options());
    const torch::Tensor w_hh_c = w_hh.contiguous(), w_hh_t = w_hh.t().contiguous();
    std::vector<float> scratch(static_cast<size_t>(hidden)), dprev(static_cast<size_t>(batch * s)),
        through_hh(static_cast<size_t>(batch * hidden));
    float* d_state = ds.data_ptr<float>();
    const float *dy_all = dy.data_ptr<float>(), *gate_all = gates.data_ptr<float>(), *gh_all = gh.data_ptr<float>(),
                *prev_all = prev.data_ptr<float>(), *post_all = post.data_ptr<float>(), *keep_all = keep_t.data_ptr<float>();
    float *dgi_all = dgi.data_ptr<float>(), *dgh_all = dgh.data_ptr<float>();
    for (int64_t t = steps - 1; t >= 0; --t) {
      const float* d_out = dy_all + t * batch * hidden;
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t j = 0; j < hidden; ++j) d_state[b * s + j] += d_out[b * hidden + j];
      }
      const float *gate = gate_all + t * batch * g, *gh_t = gh_all + t * batch * g, *before = prev_all + t * batch * s,
                  *after = post_all + t * batch * s;
      float *dgi_t = dgi_all + t * batch * g, *dgh_t = dgh_all + t * batch * g;
      for (int64_t b = 0; b < batch; ++b) {
        if (lstm) {
          lstm_row_backward(hidden, gate + b * g, after + b * s + hidden, before + b * s + hidden, d_state + b * s,
                            scratch.data(), dgi_t + b * g, dprev.data() + b * s);
        } else {
          gru_row_backward(hidden, gate + b * g, gh_t + b * g, before + b * s, d_state + b * s, dgi_t + b * g,
                           dgh_t + b * g, dprev.data() + b * s);
        }
      }
      matmul(dgh_t, batch, g, w_hh_c.data_ptr<float>(), w_hh_t.data_ptr<float>(), hidden, nullptr, through_hh.data());
      const float* k = keep_all + t * batch;
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t j = 0; j < s; ++j) {
          const float direct = dprev[static_cast<size_t>(b * s + j)];
          d_state[b * s + j] = k[b] * (j < hidden ? direct + through_hh[static_cast<size_t>(b * hidden + j)] : direct);
        }
      }
    }
    const torch::Tensor dgi_rows = dgi.view({steps * batch, g}), dgh_rows = dgh.view({steps * batch, g});
    torch::Tensor dx;
    if (ctx->needs_input_grad(0)) {
      dx = dgi_rows.mm(w_ih).view({steps, batch, in}).transpose(0, 1).reshape({batch * steps, in});
    }
    const torch::Tensor d_w_ih = dgi_rows.t().mm(xt.view({steps * batch, in}));
    const torch::Tensor d_w_hh = dgh_rows.t().mm(prev.view({steps * batch, s}).narrow(1, 0, hidden));
    return {dx, ctx->needs_input_grad(1) ? ds : torch::Tensor(), d_w_ih, d_w_hh, dgi_rows.sum(0), dgh_rows.sum(0),
            torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool recurrent_sequence_supported(const torch::Tensor& x, const torch::Tensor& state) {
  return x.device().is_cpu() && state.device().is_cpu() && x.scalar_type() == torch::kFloat &&
         state.scalar_type() == torch::kFloat;
}

RecurrentRun run_recurrent_sequence(RecurrentCell cell, const std::vector<torch::Tensor>& params, const torch::Tensor& x,
                                    int64_t num_steps, const torch::Tensor& state, const torch::Tensor& keep,
                                    bool record_states) {
  const int64_t gates = recurrent_gates(cell);
  if (params.size() != 4 || params[1].dim() != 2 || params[1].size(0) != gates * params[1].size(1)) {
    throw std::invalid_argument("run_recurrent_sequence: params are not (weight_ih, weight_hh [G*H, H], bias_ih, bias_hh)");
  }
  const int64_t hidden = params[1].size(1), batch = state.size(0);
  const int64_t state_size = cell == RecurrentCell::kLstm ? 2 * hidden : hidden;
  if (num_steps < 1 || x.dim() != 2 || x.size(0) != batch * num_steps || x.size(1) != params[0].size(1) ||
      state.dim() != 2 || state.size(1) != state_size) {
    throw std::invalid_argument("run_recurrent_sequence: x " + std::to_string(x.size(0)) + " rows for " +
                                std::to_string(batch) + " sequences of " + std::to_string(num_steps) +
                                " steps, or a state that is not [B, " + std::to_string(state_size) + "]");
  }
  const torch::Tensor keep_all = keep.defined() ? keep.to(torch::kFloat).contiguous() : torch::ones({batch, num_steps}, x.options());
  const variable_list out = RecurrentSequenceFunction::apply(x, state, params[0], params[1], params[2], params[3], keep_all,
                                                             num_steps, cell == RecurrentCell::kLstm, record_states);
  RecurrentRun result;
  result.outputs = out[0];
  result.final_state = out[1];
  if (record_states) result.states_after = out[2];
  return result;
}

}  // namespace rlx
