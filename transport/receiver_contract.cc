// What a SampleReceiver expects of its peers: the env's contract, the fragment contracts of a
// worker, and which endpoints are loopback ones.
#include <arpa/inet.h>

#include "core/observation_layout.h"
#include "transport/sample_receiver.h"

namespace rlx {

bool is_loopback_endpoint(const std::string& endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return true;
  const std::string tcp = "tcp://";
  const size_t colon = endpoint.rfind(':');
  if (endpoint.rfind(tcp, 0) != 0 || colon == std::string::npos || colon < tcp.size()) return false;
  std::string host = endpoint.substr(tcp.size(), colon - tcp.size());
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    in6_addr address{};
    if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &address) != 1) return false;
    if (IN6_IS_ADDR_LOOPBACK(&address)) return true;
    return IN6_IS_ADDR_V4MAPPED(&address) && address.s6_addr[12] == 127;
  }
  in_addr address{};
  if (inet_pton(AF_INET, host.c_str(), &address) != 1) return false;  // a name: not resolved here
  return (ntohl(address.s_addr) >> 24) == 127;
}

std::vector<FragmentContract> worker_contracts(const ReceiverOptions& options, int64_t num_envs) {
  const auto contract_of = [&](const ExpectedEnv& env, bool policy_outputs, int64_t state_size, int64_t envs) {
    FragmentContract contract;
    contract.num_steps = options.fragment_length;
    contract.num_envs = static_cast<int32_t>(envs);
    contract.obs_size = env.obs_size;
    contract.obs_bytes = env.obs_bytes;
    contract.action_size = env.action_size;
    contract.action_categories = env.action_categories;
    if (contract.action_categories.empty() && env.num_actions > 0) contract.action_categories = {env.num_actions};
    contract.mask_offset = env.mask_offset;
    contract.mask_size = env.mask_size;
    contract.policy_outputs = policy_outputs;
    contract.state_size = state_size;
    return contract;
  };
  if (options.policies.empty()) return {contract_of(options.env, options.policy_outputs, options.state_size, num_envs)};
  std::vector<FragmentContract> contracts;
  for (const PolicyExpectation& policy : options.policies) {
    contracts.push_back(contract_of(policy.env, policy.policy_outputs, policy.state_size, 1));  // a lane each
  }
  return contracts;
}

ExpectedEnv ExpectedEnv::of(const EnvSpec& spec) {
  ExpectedEnv env;
  const ObservationLayout layout = observation_layout(spec);
  env.env_id = spec.id;
  env.obs_size = layout.float_slots;
  env.obs_bytes = layout.byte_slots;
  env.action_size = spec.action_space.is_box() ? spec.action_space.size() : 0;
  env.action_categories = rlx::action_categories(spec.action_space);
  for (int64_t count : env.action_categories) env.num_actions += count;
  env.mask_offset = layout.mask_offset;
  env.mask_size = layout.mask_size;
  env.max_episode_steps = spec.max_episode_steps;
  return env;
}

}  // namespace rlx
