// Trivial main linking libdnnl: WFC_INIT creates a CPU engine, otherwise dnnl_version() only.
#include <oneapi/dnnl/dnnl.hpp>
// Like start_none it links libstdc++ (as every rlx binary does), so that only the library differs.
#include <string>
int main(int argc, char** argv) {
  if (std::string(argv[argc - 1]).size() > 1000) return 1;
#if defined(WFC_INIT)
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng.get_kind() == dnnl::engine::kind::cpu ? 0 : 1;
#else
  return dnnl_version()->major > 0 ? 0 : 1;
#endif
}
