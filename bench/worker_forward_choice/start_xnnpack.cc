// Trivial main linking libXNNPACK: WFC_INIT calls xnn_initialize (CPU detection, micro-kernel
// tables; needed before any operator), otherwise xnn_deinitialize() only.
#include <xnnpack.h>
// Like start_none it links libstdc++ (as every rlx binary does), so that only the library differs.
#include <string>
int main(int argc, char** argv) {
  if (std::string(argv[argc - 1]).size() > 1000) return 1;
#if defined(WFC_INIT)
  return xnn_initialize(nullptr) == xnn_status_success ? 0 : 1;
#else
  return xnn_deinitialize() == xnn_status_success ? 0 : 1;
#endif
}
