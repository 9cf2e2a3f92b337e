// Encoders: typed messages -> multipart frames (header frame first). Large columns of
// fragments and weights are sent without copies; the frames keep their owner alive.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <zmq.hpp>

#include "transport/messages.h"

namespace rlx {

// Hello of hello.worker_id; throws std::invalid_argument on fields a decoder would reject.
std::vector<zmq::message_t> encode_hello(const Hello& hello, uint64_t sequence);

// Heartbeat from sender_id.
std::vector<zmq::message_t> encode_heartbeat(uint64_t sender_id, uint64_t sequence);

// A fragment of batch->worker_id at batch->policy_version, zero-copy; throws std::invalid_argument
// if the batch fails SampleBatch::validate(), holds a flag other than 0/1 or a negative action.
// initial_states [K, S] goes out when state_size > 0 (a recurrent policy), and only then.
// The batch must not change while frames are alive.
std::vector<zmq::message_t> encode_sample_fragment(std::shared_ptr<const SampleBatch> batch, uint64_t sequence);

// Episode statistics from sender_id (copied); throws std::invalid_argument if the columns' sizes
// differ or a length is negative.
std::vector<zmq::message_t> encode_episode_stats(const EpisodeStats& stats, uint64_t sender_id, uint64_t sequence);

// Weights at weights->policy_version, zero-copy; throws std::invalid_argument if mean and var differ
// in size or obs_count is not a finite count (when mean is non-empty).
// The weights must not change while frames are alive.
std::vector<zmq::message_t> encode_weights(std::shared_ptr<const Weights> weights, uint64_t sender_id,
                                           uint64_t sequence);

// Credit grant from sender_id; throws std::invalid_argument unless 1 <= credits <= kMaxCredits.
std::vector<zmq::message_t> encode_credit_grant(const CreditGrant& grant, uint64_t sender_id, uint64_t sequence);

// Stop from sender_id.
std::vector<zmq::message_t> encode_stop(uint64_t sender_id, uint64_t sequence);

// A worker's goodbye from sender_id that says why it stops (stop_info_json of the reason).
std::vector<zmq::message_t> encode_stop(uint64_t sender_id, uint64_t sequence, const StopReason& reason);

// Join from sender_id.
std::vector<zmq::message_t> encode_join(uint64_t sender_id, uint64_t sequence);

// Welcome from sender_id (copied); throws std::invalid_argument unless setup_json is a JSON
// object of at most kMaxWelcomeInfoBytes bytes.
std::vector<zmq::message_t> encode_welcome(const Welcome& welcome, uint64_t sender_id, uint64_t sequence);

}  // namespace rlx
