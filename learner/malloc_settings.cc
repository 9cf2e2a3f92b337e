#include "learner/malloc_settings.h"

#include <malloc.h>

#include <cstdlib>

namespace rlx {

namespace {

constexpr int kMmapThresholdBytes = 32 << 20;
constexpr int kTrimThresholdBytes = 128 << 20;
constexpr int kTopPadBytes = 16 << 20;

void set_unless_given(const char* variable, int parameter, int value) {
  if (std::getenv(variable) == nullptr) mallopt(parameter, value);
}

}  // namespace

void tune_malloc_for_tensors() {
  set_unless_given("MALLOC_MMAP_THRESHOLD_", M_MMAP_THRESHOLD, kMmapThresholdBytes);
  set_unless_given("MALLOC_TRIM_THRESHOLD_", M_TRIM_THRESHOLD, kTrimThresholdBytes);
  set_unless_given("MALLOC_TOP_PAD_", M_TOP_PAD, kTopPadBytes);
}

}  // namespace rlx
