// A well-formed plugin registering PluginCounter-v0.
#include "counter_env.h"

RLX_ENV_PLUGIN(registrar) {
  registrar.add(rlx_test_plugins::CounterEnv::default_spec(), rlx_test_plugins::make_counter_env);
}
