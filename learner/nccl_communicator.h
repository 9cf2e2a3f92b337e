// NcclCommunicator: Communicator over the raw NCCL API for CUDA tensors (built when CMake finds
// the CUDA toolkit and NCCL; RLX_WITH_NCCL is then defined). Needs no CUDA build of LibTorch:
// each call synchronises the device (so LibTorch's queued kernels have finished), runs the NCCL
// operation on the communicator's own stream and waits for it, polling so that a dead peer
// surfaces as CommunicatorError after the timeout (the communicator is then aborted).
#pragma once

#include <chrono>
#include <memory>

#include <c10/util/intrusive_ptr.h>

#include "learner/communicator.h"

namespace c10d {
class Store;
}  // namespace c10d

namespace rlx {

// True when this build has the NCCL backend.
bool nccl_available();

// Number of CUDA devices visible to the CUDA runtime (0 without the NCCL backend or a GPU).
int cuda_device_count();

// Makes a communicator of `size` ranks on CUDA device `device_index`; rank 0 creates the NCCL
// unique id and publishes it under `key` in store. Throws CommunicatorError (also when this
// build has no NCCL backend).
std::unique_ptr<Communicator> make_nccl_communicator(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                     int device_index, std::chrono::milliseconds timeout,
                                                     const std::string& key = "rlx/nccl_unique_id");

}  // namespace rlx
