// rlx_checkpoint_diff A B: compares two checkpoints' learner archives (model_and_optimizer.pt)
// tensor by tensor, for the cluster tests' "same batches, same weights" check. Prints one line
// per model tensor and, last, "max_rel_diff X" (the largest |a - b| / max(|a|max, 1e-6)); exits
// 0 when the archives hold the same model tensors of the same shapes, 1 otherwise. The
// optimizer's tensors are left out: LibTorch keys Adam's state by parameter address.
#include <torch/serialize.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>

#include "core/checkpoint_dir.h"

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

std::map<std::string, torch::Tensor> load_tensors(const std::string& checkpoint_dir) {
  const rlx::Checkpoint checkpoint = rlx::read_checkpoint_dir(checkpoint_dir);
  const std::string& bytes = checkpoint.files.at("model_and_optimizer.pt");
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size());
  std::map<std::string, torch::Tensor> tensors;
  collect_tensors(archive, "", tensors);
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
