// `rlx bench learner --precision`: the LibTorch learner's throughput in several precisions side by
// side, with their ratio to the first (tests assert on lines and keys, not on time).
#include <catch2/catch.hpp>

#include <string>

#include "run_rlx.h"

TEST_CASE("rlx bench learner --precision fp32,bf16 runs both and prints bf16's throughput over fp32's",
          "[cli][bench][precision]") {
  const rlx::test::CommandOutput r =
      rlx::test::run_rlx("bench learner --learners 1 --precision fp32,bf16 --hidden 16 --fragments 1 --epochs 1 --repeats 1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("learners=1 device=cpu precision=fp32 hidden=16 batch=1024") != std::string::npos);
  CHECK(r.out.find("learners=1 device=cpu precision=bf16 hidden=16 batch=1024") != std::string::npos);
  CHECK(r.out.find("hidden=16 device=cpu learners=1 samples_per_s_ratio_bf16_over_fp32=") != std::string::npos);
}

TEST_CASE("rlx bench learner refuses an unknown precision, and fp16 on the CPU with the fix", "[cli][bench][precision]") {
  const rlx::test::CommandOutput unknown = rlx::test::run_rlx("bench learner --precision fp32,fp8");
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.err.find("--precision takes fp32, bf16, fp16, comma-separated; got 'fp32,fp8'") != std::string::npos);
  const rlx::test::CommandOutput fp16 = rlx::test::run_rlx("bench learner --learners 1 --precision fp16 --hidden 16 --fragments 1");
  CHECK(fp16.exit_code == 2);
  CHECK(fp16.err.find("precision: fp16 needs device: cuda") != std::string::npos);
  CHECK(fp16.err.find("on a CPU use precision: bf16") != std::string::npos);
}
