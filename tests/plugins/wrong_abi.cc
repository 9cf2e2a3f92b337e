// A plugin built for another ABI version (one newer than this rlx's); its registration
// function must never run.
#include <stdexcept>

#include "counter_env.h"

extern "C" RLX_ENV_PLUGIN_EXPORT int rlx_env_plugin_abi_version() { return rlx::kEnvPluginAbiVersion + 1; }

extern "C" RLX_ENV_PLUGIN_EXPORT void rlx_register_envs(rlx::EnvRegistrar& registrar) {
  registrar.add(rlx_test_plugins::CounterEnv::default_spec(), rlx_test_plugins::make_counter_env);
}
