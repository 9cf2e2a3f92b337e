// Trivial main linking no inference library (the hand-kernel worker's case). It links
// libstdc++ like every rlx binary (and like libdnnl does), so that only the library differs.
#include <string>
__attribute__((noinline)) int trivial(const std::string& s) { return s.size() > 1000 ? 1 : 0; }
int main(int argc, char** argv) { return trivial(std::string(argv[argc - 1])); }
