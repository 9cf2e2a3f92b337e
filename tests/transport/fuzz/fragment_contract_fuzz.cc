// libFuzzer target for the fragment-contract check (build notes in CMakeLists.txt); the same
// body runs under ASan + UBSan in the test suite (tests/transport/fragment_contract_fuzz_test.cc).
#include "tests/transport/fuzz/fragment_contract_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)rlx::fuzz_fragment_contract(data, size);
  return 0;
}
