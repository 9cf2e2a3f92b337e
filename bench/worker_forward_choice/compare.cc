// compare A B: max |a - b| and max |a| of two raw float32 files of the same length.
#include <cmath>
#include <cstdio>
#include <vector>

static std::vector<float> slurp(const char* path) {
  std::vector<float> v;
  FILE* f = std::fopen(path, "rb");
  if (!f) return v;
  float x;
  while (std::fread(&x, sizeof(x), 1, f) == 1) v.push_back(x);
  std::fclose(f);
  return v;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::vector<float> a = slurp(argv[1]), b = slurp(argv[2]);
  if (a.empty() || a.size() != b.size()) {
    std::printf("max_abs_diff=nan size_a=%zu size_b=%zu\n", a.size(), b.size());
    return 1;
  }
  double diff = 0, mag = 0;
  size_t bit_equal = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::fmax(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    mag = std::fmax(mag, std::fabs(static_cast<double>(a[i])));
    bit_equal += a[i] == b[i];
  }
  std::printf("max_abs_diff=%.3g max_abs_value=%.3g equal_fraction=%.4f n=%zu\n", diff, mag,
              static_cast<double>(bit_equal) / a.size(), a.size());
  return 0;
}
