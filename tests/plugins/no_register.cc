// A broken plugin: it exports the ABI version but no registration function.
#include "envs/plugin.h"

extern "C" RLX_ENV_PLUGIN_EXPORT int rlx_env_plugin_abi_version() { return rlx::kEnvPluginAbiVersion; }
