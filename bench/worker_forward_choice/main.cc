// One back end's measurement program (linked with hand.cc, onednn.cc or xnnpack.cc):
//   <prog> bench MODEL K REPEATS   median / min microseconds per forward step
//   <prog> dump MODEL K FILE       one forward's output, raw float32
//   <prog> hold MODEL K READYFILE  one forward, then create READYFILE and sleep until killed
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/worker_forward_choice/common.h"

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int usage() {
  std::fprintf(stderr, "usage: prog bench|dump|hold MODEL(nature|minatar|lstm|gru) K ARG\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wfc;
  if (argc != 5) return usage();
  const std::string mode = argv[1];
  Model m;
  if (!parse_model(argv[2], &m)) return usage();
  const int k = std::atoi(argv[3]);
  const double t0 = seconds_now();
  std::unique_ptr<Net> net(make_net(m, k));
  const double setup_s = seconds_now() - t0;
  const Inputs in = make_inputs(m, k);
  std::vector<float> out(static_cast<size_t>(k) * output_width(m));

  if (mode == "dump") {
    net->forward(in, out.data());
    FILE* f = std::fopen(argv[4], "wb");
    if (!f || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size()) return 1;
    std::fclose(f);
    return 0;
  }
  if (mode == "hold") {
    net->forward(in, out.data());
    FILE* f = std::fopen(argv[4], "w");
    if (!f) return 1;
    std::fprintf(f, "%d\n", static_cast<int>(getpid()));
    std::fclose(f);
    for (;;) pause();
  }
  if (mode != "bench") return usage();
  const int repeats = std::atoi(argv[4]);
  const double w0 = seconds_now();
  net->forward(in, out.data());
  const double first_s = seconds_now() - w0;
  // Warm up ~0.2 s, then size each repeat to ~0.15 s (at least 3 steps).
  int warm = 0;
  const double w1 = seconds_now();
  while (seconds_now() - w1 < 0.2 || warm < 3) {
    net->forward(in, out.data());
    ++warm;
  }
  const double per = (seconds_now() - w1) / warm;
  const int iters = std::max(3, static_cast<int>(0.15 / per));
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    const double s = seconds_now();
    for (int i = 0; i < iters; ++i) net->forward(in, out.data());
    us.push_back((seconds_now() - s) / iters * 1e6);
  }
  std::sort(us.begin(), us.end());
  std::printf("backend=%s model=%s k=%d us_median=%.2f us_min=%.2f us_max=%.2f repeats=%d iters=%d setup_ms=%.2f first_ms=%.3f\n",
              backend_name(), model_name(m), k, us[us.size() / 2], us.front(), us.back(), repeats, iters,
              setup_s * 1e3, first_s * 1e3);
  return 0;
}
