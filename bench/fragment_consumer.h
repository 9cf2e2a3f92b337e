// The benchmarks' stand-in learner: a thread that pops a receiver's fragments as fast as they
// come, until stopped or destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "transport/sample_receiver.h"

namespace rlx {

class FragmentConsumer {
 public:
  // Starts popping from receiver, which must outlive this.
  explicit FragmentConsumer(SampleReceiver& receiver)
      : thread_([this, &receiver] {
          while (running_) receiver.pop(std::chrono::milliseconds(50));
        }) {}
  ~FragmentConsumer() { stop(); }
  FragmentConsumer(const FragmentConsumer&) = delete;
  FragmentConsumer& operator=(const FragmentConsumer&) = delete;

  // Stops popping and joins the thread; idempotent.
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> running_{true};
  std::thread thread_;
};

}  // namespace rlx
