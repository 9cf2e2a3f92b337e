// A plugin whose registration adds one env and then fails.
#include <stdexcept>

#include "counter_env.h"

RLX_ENV_PLUGIN(registrar) {
  registrar.add(rlx_test_plugins::CounterEnv::default_spec(), rlx_test_plugins::make_counter_env);
  throw std::runtime_error("the test plugin gave up");
}
