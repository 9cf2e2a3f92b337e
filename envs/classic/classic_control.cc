// Scaffold: replaced by the classic-control implementation.
#include "envs/classic/classic_control.h"
namespace rlx {
void register_classic_control(EnvRegistrar&) {}
}  // namespace rlx
