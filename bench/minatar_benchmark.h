// MinAtar stepping side by side: the game alone (envs/minatar/minatar_game.h) against the same
// game through the Env API (envs/minatar/minatar_env.h), so that `rlx envs bench` shows what the
// API's contract checks and copies cost on a byte observation.
#pragma once

#include <cstdint>
#include <optional>

#include "envs/env.h"

namespace rlx {

// Steps per second of env's game played bare on this thread for about `seconds`: a fresh game of
// the same kind and options, one uniformly random action of env's action set per step (drawn from
// the game's Rng), the sticky-action draw, write_observation into a buffer every step and a reset
// at every episode's end; nullopt when env is not a MinAtarEnv.
std::optional<double> measure_minatar_game_steps_per_s(const Env& env, double seconds, uint64_t seed);

// Steps per second of env itself through Env::reset and Env::step for about `seconds`: the same
// random actions as above (a Discrete action space), the contract checks and the copy of both
// observation parts into caller buffers every step, a reset at every episode's end; nullopt when
// env is not a MinAtarEnv. Resets env with `seed` first.
std::optional<double> measure_minatar_env_api_steps_per_s(Env& env, double seconds, uint64_t seed);

}  // namespace rlx
