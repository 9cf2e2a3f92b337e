// The one serialised form of a ModelSpec (models/model_spec.h): the same JSON object travels in
// the workers' Welcome (rollout/worker_setup.h), in a checkpoint's manifest ("model") and in the
// .rlxp header ("model"):
//
//   {"version": 2, "kind": "actor_critic" | "q_network" | "squashed_gaussian",
//    "observation_size": O (the flattened input), "observation_space": (core/space_json.h),
//    "action_mask": false, "action_space": (core/space_json.h),
//    "encoder": {"kind": "mlp" (or a registered kind), "hidden_sizes": [64, 64], "activation": "tanh" | "relu", "shared": false},
//    "heads": {"log_std_init": 0.0, "dueling": false,
//              "hidden_sizes": [64]},                          (only for an actor_critic with head layers)
//    "init": "orthogonal" | "torch_default",
//    "core": {"kind": "lstm" | "gru", "size": 64, "layers": 1}}   (only for a recurrent model)
//
// A reader refuses a version it does not know and any key it does not know (a newer rlx's
// model part it could not build), naming it. Version 1 (rlx before every space) had neither
// observation_space nor action_mask: a float32 Box of O, no mask. A memoryless model has no
// "core" key, so its JSON is what an rlx before recurrent cores wrote; such an rlx refuses a
// recurrent model by naming "model.core". Likewise a model without head layers has no
// "heads.hidden_sizes", and an rlx before them refuses one with, naming "model.heads.hidden_sizes".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/model_spec.h"

namespace rlx {

// The version of the model JSON this build writes (it reads 1 too).
constexpr int kModelSpecVersion = 2;  // 2: observation_space, action_mask

// The spec as JSON (every field, whatever the kind).
nlohmann::json model_spec_to_json(const ModelSpec& spec);

// Reads and validates model_spec_to_json's form from untrusted input; throws
// std::invalid_argument naming the key path under `where` ("model.encoder.hidden_sizes[2]"),
// what was expected and what was found.
ModelSpec model_spec_from_json(const nlohmann::json& value, const std::string& where = "model");

}  // namespace rlx
