#include "learner/generation_communicator.h"

namespace rlx {

void GenerationCommunicator::swap(std::unique_ptr<Communicator> next) {
  if (!next) throw std::invalid_argument("GenerationCommunicator::swap needs a communicator");
  if (next->device() != device_) throw std::invalid_argument("GenerationCommunicator::swap: a communicator of another device");
  abandon();
  rank_ = next->rank();
  size_ = next->size();
  current_ = std::move(next);
}

void GenerationCommunicator::abandon() {
  if (!current_) return;
  current_->abandon();
  current_.reset();
}

Communicator& GenerationCommunicator::current() {
  if (!current_) throw CommunicatorError("the learner group is being re-formed (its last generation failed)");
  return *current_;
}

}  // namespace rlx
