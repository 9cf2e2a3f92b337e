// The CPU sequence run with its hand-written backward (learner/recurrent_sequence.h) against
// ATen's lstm_cell / gru_cell stepped under autograd: outputs, states and every gradient, with
// episode starts inside the sequences.
#include "tests/learner/torch_catch.h"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "learner/recurrent_sequence.h"
#include "learner/torch_recurrent.h"
#include "models/recurrent_layers.h"

namespace {

struct Case {
  rlx::LayerSpec layer;
  std::vector<torch::Tensor> params;
  torch::Tensor x, state, keep;
  int64_t batch = 3, steps = 5, in = 4, hidden = 6;
};

Case make_case(const std::string& kind) {
  torch::manual_seed(7);
  Case c;
  c.layer.name = "core";
  c.layer.kind = kind;
  c.layer.in = c.in;
  c.layer.attributes = {{"hidden", c.hidden}};
  const int64_t g = (kind == rlx::kLstmLayer ? 4 : 3) * c.hidden;
  const int64_t s = (kind == rlx::kLstmLayer ? 2 : 1) * c.hidden;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{g, c.in}, {g, c.hidden}, {g}, {g}}) {
    c.params.push_back((torch::randn(shape) * 0.5).requires_grad_());
  }
  c.x = torch::randn({c.batch * c.steps, c.in}).requires_grad_();
  c.state = (torch::randn({c.batch, s}) * 0.5).requires_grad_();
  c.keep = torch::ones({c.batch, c.steps});
  c.keep.index_put_({0, 2}, 0.0);  // an episode starts at step 2 of sequence 0 and at step 4 of sequence 2
  c.keep.index_put_({2, 4}, 0.0);
  return c;
}

// The reference: ATen's cell step by step, each state multiplied by keep before its step.
std::vector<torch::Tensor> reference(const Case& c, torch::Tensor& outputs, torch::Tensor& final_state) {
  const torch::Tensor steps = c.x.view({c.batch, c.steps, c.in});
  torch::Tensor state = c.state;
  std::vector<torch::Tensor> ys, states;
  for (int64_t t = 0; t < c.steps; ++t) {
    state = state * c.keep.select(1, t).unsqueeze(1);
    auto [y, next] = rlx::torch_recurrent_step(c.layer, c.params, steps.select(1, t), state);
    ys.push_back(y);
    state = next;
    states.push_back(state);
  }
  outputs = torch::stack(ys, 1).reshape({c.batch * c.steps, c.hidden});
  final_state = state;
  return states;
}

// Gradients of a loss that reads every output and the final state.
std::vector<torch::Tensor> gradients(const Case& c, const torch::Tensor& outputs, const torch::Tensor& final_state) {
  const torch::Tensor weights = torch::linspace(-1.0, 1.0, outputs.numel()).view_as(outputs);
  const torch::Tensor loss = (outputs * weights).sum() + (final_state * final_state).sum();
  std::vector<torch::Tensor> inputs{c.x, c.state};
  inputs.insert(inputs.end(), c.params.begin(), c.params.end());
  return torch::autograd::grad({loss}, inputs);
}

void check_close(const torch::Tensor& a, const torch::Tensor& b, const std::string& what) {
  INFO(what << ": max difference " << (a - b).abs().max().item<float>());
  CHECK(torch::allclose(a, b, 1e-4, 1e-5));
}

}  // namespace

TEST_CASE("the CPU sequence run equals ATen's cells forward and backward, episode starts included",
          "[learner][recurrent]") {
  for (const std::string kind : {rlx::kLstmLayer, rlx::kGruLayer}) {
    INFO(kind);
    const Case c = make_case(kind);
    torch::Tensor expected_outputs, expected_final;
    const std::vector<torch::Tensor> expected_states = reference(c, expected_outputs, expected_final);
    const rlx::RecurrentRun run = rlx::run_recurrent_sequence(
        rlx::recurrent_cell(c.layer), c.params, c.x, c.steps, c.state, c.keep, /*record_states=*/true);
    check_close(run.outputs, expected_outputs, "outputs");
    check_close(run.final_state, expected_final, "final state");
    check_close(run.states_after, torch::stack(expected_states, 1), "states after each step");

    const std::vector<torch::Tensor> expected_grads = gradients(c, expected_outputs, expected_final);
    const std::vector<torch::Tensor> grads = gradients(c, run.outputs, run.final_state);
    const char* names[] = {"x", "state", "weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    for (size_t i = 0; i < grads.size(); ++i) check_close(grads[i], expected_grads[i], std::string("d ") + names[i]);
  }
}

TEST_CASE("the CPU sequence run refuses shapes that do not fit", "[learner][recurrent]") {
  const Case c = make_case(rlx::kGruLayer);
  const rlx::RecurrentCell cell = rlx::recurrent_cell(c.layer);
  CHECK_THROWS_WITH(rlx::run_recurrent_sequence(cell, c.params, c.x, 4, c.state, torch::Tensor(), false),
                    Catch::Contains("15 rows for 3 sequences of 4 steps"));
  CHECK_THROWS_WITH(rlx::run_recurrent_sequence(rlx::RecurrentCell::kLstm, c.params, c.x, c.steps, c.state,
                                                torch::Tensor(), false),
                    Catch::Contains("weight_hh [G*H, H]"));
}
