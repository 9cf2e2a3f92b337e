// rlx-synthetic-envs.so: the synthetic benchmark envs (Synthetic/Pixels84-v0) as an env plugin,
// so that the `rlx worker` processes a benchmark starts (which link no benchmark code) know them:
// `rlx bench sampling` passes --env-plugin <this> to its workers. Not for users' runs.
#include "bench/synthetic_pixels_env.h"
#include "envs/plugin.h"

RLX_ENV_PLUGIN(registrar) { rlx::register_synthetic_envs(registrar); }
