// rlx_checkpoint_diff A B: compares two checkpoints' learner files tensor by tensor, for the
// cluster tests' "same batches, same weights" check: PPO's ppo_learner.bin (parameters and
// Adam's moments, native/ppo_state_file.h) or a LibTorch archive (DQN's, or PPO's before that
// format; their optimizer tensors are left out, as LibTorch keys Adam's state by parameter
// address). Prints one line per tensor and, last, "max_rel_diff X" (the largest |a - b| /
// max(|a|max, 1e-6)); exits 0 when both hold the same tensors of the same shapes, 1 otherwise.
#include <torch/serialize.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include <sstream>

#include "core/checkpoint_dir.h"
#include "native/ppo_state_file.h"

namespace {

// Every tensor of `archive` (recursing into nested archives) by its dotted path.
void collect_tensors(torch::serialize::InputArchive& archive, const std::string& prefix,
                     std::map<std::string, torch::Tensor>& out) {
  for (const std::string& key : archive.keys()) {
    if (prefix.empty() && key == "optimizer") continue;
    torch::Tensor tensor;
    if (archive.try_read(key, tensor)) {
      out[prefix + key] = tensor;
      continue;
    }
    torch::serialize::InputArchive nested;
    if (archive.try_read(key, nested)) collect_tensors(nested, prefix + key + ".", out);
  }
}

torch::Tensor to_tensor(const std::vector<float>& values) {
  return torch::tensor(values, torch::kFloat);
}

std::map<std::string, torch::Tensor> load_tensors(const std::string& checkpoint_dir) {
  const rlx::Checkpoint checkpoint = rlx::read_checkpoint_dir(checkpoint_dir);
  std::map<std::string, torch::Tensor> tensors;
  if (const auto ppo = checkpoint.files.find(rlx::kPpoLearnerFile); ppo != checkpoint.files.end()) {
    const std::string& bytes = ppo->second;
    uint64_t count = 0;
    if (bytes.size() >= 16) std::memcpy(&count, bytes.data() + 8, sizeof(count));
    std::istringstream in(bytes);
    const rlx::PpoLearnerState state = rlx::read_ppo_learner_state(in, static_cast<int64_t>(count));
    tensors["params"] = to_tensor(state.params);
    tensors["adam.exp_avg"] = to_tensor(state.exp_avg);
    tensors["adam.exp_avg_sq"] = to_tensor(state.exp_avg_sq);
    return tensors;
  }
  for (const char* name : {"model_and_optimizer.pt", "q_networks_and_optimizer.pt"}) {
    const auto file = checkpoint.files.find(name);
    if (file == checkpoint.files.end()) continue;
    torch::serialize::InputArchive archive;
    archive.load_from(file->second.data(), file->second.size());
    collect_tensors(archive, "", tensors);
  }
  return tensors;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: rlx_checkpoint_diff CHECKPOINT_A CHECKPOINT_B\n";
    return 2;
  }
  const auto a = load_tensors(argv[1]);
  const auto b = load_tensors(argv[2]);
  if (a.empty() || a.size() != b.size()) {
    std::cerr << "the archives hold " << a.size() << " and " << b.size() << " tensors\n";
    return 1;
  }
  double max_rel = 0.0;
  for (const auto& [name, tensor] : a) {
    const auto other = b.find(name);
    if (other == b.end() || !other->second.sizes().equals(tensor.sizes())) {
      std::cerr << name << ": missing or of another shape in " << argv[2] << "\n";
      return 1;
    }
    const torch::Tensor x = tensor.to(torch::kDouble), y = other->second.to(torch::kDouble);
    const double scale = std::max(x.abs().max().item<double>(), 1e-6);
    const double rel = (x - y).abs().max().item<double>() / scale;
    std::cout << name << " " << rel << "\n";
    max_rel = std::max(max_rel, rel);
  }
  std::cout << "max_rel_diff " << max_rel << "\n";
  return 0;
}
