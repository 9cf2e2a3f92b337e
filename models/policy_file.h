// The exported-policy file (.rlxp), written by `rlx export` and read by rlx::Policy
// (models/policy.h) and python/rlx_policy.py. One self-describing file, little-endian:
//
//   [0, 8)    magic "\x89RLXP\r\n\x1a" (a PNG-style magic: text-mode copies and truncation show)
//   [8, 12)   uint32 format version (kPolicyFileVersion)
//   [12, 16)  uint32 H, the header's length in bytes
//   [16, 16+H) header: UTF-8 JSON (below)
//   zero bytes up to a multiple of 8, then float32 data: `data_floats` values
//   last 4    uint32 CRC-32 (zlib's, IEEE 802.3) of every byte before it
//
// The header: {"format": "rlx-policy", "version": 2, "model" (the model spec, in the one form
// models/model_spec_json.h gives it: kind, observation_size, action_space, encoder, heads, init),
// "chains" (each chain's dense
// layers with name, in, out, activation, weight_offset, bias_offset into the parameters: the
// layout of models/network_layout.h spelled out, so that a reader needs no copy of it; a layer
// of a registered kind (models/layer_kinds.h) has "kind", "attributes" ({name: integer}: a
// "conv2d" layer's height, width, in_channels, out_channels, kernel, stride, padding) and
// "parameters" [{name, shape, offset}] in place of the two offsets, and only readers that know
// its kind run it; a recurrent "lstm" or "gru" layer (models/recurrent_layers.h) has "state_offset"
// too, where its state lies in the model's),
// "log_std_offset" (actor_critic with Box actions), "state_size" (a recurrent model only: the
// floats of state per episode, every recurrent layer's at its state_offset), "arrays" ({"parameters" | "obs_mean" |
// "obs_var": {"offset", "count"}} in floats from the data's start), "obs_normalization"
// (null, or {"epsilon", "clip", "count"}), "epsilon" (q_network: stochastic act's exploration
// rate), "data_floats", and "source" (algorithm, env, checkpoint, iteration, timesteps,
// rlx_version)}.
//
// Version 1 (rlx before model specs) had "policy" (the kind), "observation_size",
// "action_space" and "network" (hidden_sizes, activation, shared_trunk, log_std_init, dueling) in
// place of "model"; it is still read. A recurrent model's file is version 2 too, and a reader from
// before recurrent cores refuses it by name: rlx::Policy at "model.core" (an unknown key of the
// model spec), rlx_policy.py at its first layer of kind "lstm" or "gru".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/model_spec.h"
#include "models/policy.h"

namespace rlx {

// The version written; kPolicyFileVersion and the version before it are read.
constexpr uint32_t kPolicyFileVersion = 2;

// Everything an exported policy is.
struct PolicyFile {
  ModelSpec model;                  // the networks (their kind says how the policy acts)
  std::vector<float> parameters;    // [P], in models/network_layout.h's flat order
  std::vector<float> obs_mean;      // [O]; empty when observations are not normalised
  std::vector<float> obs_var;       // [O]
  double obs_count = 0;             // samples behind mean and var
  double epsilon = 0;               // kQNetwork: the exploration rate of stochastic actions
  std::string algorithm;            // "PPO", "DQN", ...
  std::string env_id;
  nlohmann::json source = nlohmann::json::object();  // checkpoint, iteration, timesteps, rlx_version
};

// The file's bytes; throws std::invalid_argument when parameters or statistics do not fit the network.
std::string encode_policy_file(const PolicyFile& file);

// Parses and checks bytes read from name (for messages): magic, version, length, checksum, the
// header's fields, and that its chains are the layout models/ builds for its network (every
// layer's fields and attributes). Throws PolicyFileError naming name and the first thing wrong
// (for a chain: the chain, the layer and its field or attribute).
PolicyFile decode_policy_file(std::string_view bytes, const std::string& name);

// Reads and decodes a file; throws PolicyFileError when it cannot be read or decoded.
PolicyFile read_policy_file(const std::filesystem::path& path);

// CRC-32 (zlib's crc32, polynomial 0xEDB88320) of bytes.
uint32_t crc32_ieee(std::string_view bytes);

}  // namespace rlx
