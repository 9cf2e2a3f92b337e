// core/error_text.h against LibTorch's real errors: the stack trace c10 appends goes, the
// message stays.
#include "tests/learner/torch_catch.h"  // first: Catch's CHECK, not glog's

#include <stdexcept>
#include <string>

#include <c10/util/Exception.h>
#include <torch/torch.h>

#include "core/error_text.h"

namespace rlx {
namespace {

TEST_CASE("error_text drops the stack trace of a TORCH_CHECK failure", "[learner]") {
  try {
    TORCH_CHECK(false, "the tensor has ", 3, " dimensions");
    FAIL("TORCH_CHECK did not throw");
  } catch (const c10::Error& error) {
    REQUIRE(std::string(error.what()).find("frame #") != std::string::npos);  // LibTorch adds one
    CHECK(error_text(error) == "the tensor has 3 dimensions");
  }
}

TEST_CASE("error_text drops the stack trace of an op's shape error", "[learner]") {
  try {
    (void)torch::matmul(torch::ones({2, 3}), torch::ones({2, 3}));
    FAIL("matmul of mismatched shapes did not throw");
  } catch (const c10::Error& error) {
    const std::string text = error_text(error);
    CHECK(text.find("cannot be multiplied") != std::string::npos);
    CHECK(text.find("Exception raised from") == std::string::npos);
    CHECK(text.find('\n') == std::string::npos);
  }
}

TEST_CASE("error_text keeps other exceptions whole", "[learner]") {
  const std::runtime_error error("line one\nline two");
  CHECK(error_text(error) == "line one\nline two");
}

}  // namespace
}  // namespace rlx
