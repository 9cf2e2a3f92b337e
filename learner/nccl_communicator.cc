#include "learner/nccl_communicator.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifdef RLX_WITH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace rlx {

#ifdef RLX_WITH_NCCL

namespace {

void check_cuda(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw CommunicatorError("CUDA " + what + ": " + cudaGetErrorString(status));
}

void check_nccl(ncclResult_t status, const std::string& what) {
  if (status != ncclSuccess && status != ncclInProgress) {
    throw CommunicatorError("NCCL " + what + ": " + ncclGetErrorString(status));
  }
}

ncclDataType_t nccl_type(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat: return ncclFloat32;
    case torch::kDouble: return ncclFloat64;
    case torch::kLong: return ncclInt64;
    case torch::kInt: return ncclInt32;
    case torch::kUInt8: return ncclUint8;
    default: throw std::invalid_argument("NcclCommunicator: unsupported dtype " + std::string(c10::toString(t.scalar_type())));
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
  }
  return ncclSum;
}

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, int device_index,
                   std::chrono::milliseconds timeout, const std::string& key)
      : rank_(rank), size_(size), device_index_(device_index), timeout_(timeout) {
    check_cuda(cudaSetDevice(device_index_), "cudaSetDevice(" + std::to_string(device_index_) + ")");
    ncclUniqueId id;
    if (rank_ == 0) {
      check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      store->set(key, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&id), reinterpret_cast<uint8_t*>(&id) + sizeof(id)));
    }
    const std::vector<uint8_t> bytes = store->get(key);  // waits for rank 0 (store timeout)
    if (bytes.size() != sizeof(id)) throw CommunicatorError("NCCL unique id in the store has the wrong size");
    std::memcpy(&id, bytes.data(), sizeof(id));
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_nccl(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  }

  ~NcclCommunicator() override {
    if (comm_ != nullptr) {
      if (aborted_) {
        ncclCommAbort(comm_);
      } else {
        ncclCommDestroy(comm_);
      }
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  torch::Device device() const override { return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device_index_)); }

  void allreduce(torch::Tensor& tensor, ReduceOp op) override {
    require(tensor, "allreduce");
    run("allreduce", [&] {
      return ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()), nccl_type(tensor),
                           nccl_op(op), comm_, stream_);
    });
  }

  void broadcast(torch::Tensor& tensor, int root) override {
    require(tensor, "broadcast");
    run("broadcast", [&] {
      return ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()), nccl_type(tensor), root,
                           comm_, stream_);
    });
  }

  void send(const torch::Tensor& tensor, int dst) override {
    require(tensor, "send");
    run("send", [&] {
      return ncclSend(tensor.data_ptr(), static_cast<size_t>(tensor.numel()), nccl_type(tensor), dst, comm_, stream_);
    });
  }

  void recv(torch::Tensor& tensor, int src) override {
    require(tensor, "recv");
    run("recv", [&] {
      return ncclRecv(tensor.data_ptr(), static_cast<size_t>(tensor.numel()), nccl_type(tensor), src, comm_, stream_);
    });
  }

  void abandon() override { aborted_ = true; }  // ncclCommAbort, not ncclCommDestroy, at destruction

  void barrier() override {
    torch::Tensor one = torch::ones({1}, torch::TensorOptions().dtype(torch::kFloat).device(device()));
    allreduce(one, ReduceOp::kSum);
  }

 private:
  void require(const torch::Tensor& tensor, const char* what) const {
    if (!tensor.defined() || !tensor.is_cuda() || tensor.get_device() != device_index_ || !tensor.is_contiguous()) {
      throw std::invalid_argument(std::string("NcclCommunicator::") + what + " needs a contiguous tensor on cuda:" +
                                  std::to_string(device_index_));
    }
  }

  // LibTorch's queued work first, then the NCCL call on our stream, polled up to the timeout.
  template <typename Launch>
  void run(const std::string& what, Launch launch) {
    if (aborted_) throw CommunicatorError("NCCL communicator was aborted after an earlier failure");
    check_cuda(cudaSetDevice(device_index_), "cudaSetDevice");
    check_cuda(cudaDeviceSynchronize(), "synchronize before " + what);
    check_nccl(launch(), what);
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      const cudaError_t status = cudaStreamQuery(stream_);
      if (status == cudaSuccess) return;
      if (status != cudaErrorNotReady) check_cuda(status, what);
      ncclResult_t async_error = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm_, &async_error), "ncclCommGetAsyncError");
      if (async_error != ncclSuccess && async_error != ncclInProgress) {
        aborted_ = true;
        throw CommunicatorError("NCCL " + what + " failed (a learner rank died?): " + ncclGetErrorString(async_error));
      }
      if (std::chrono::steady_clock::now() > deadline) {
        aborted_ = true;
        throw CommunicatorError("NCCL " + what + " timed out after " + std::to_string(timeout_.count()) +
                                " ms (a learner rank died or stalls)");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  int rank_;
  int size_;
  int device_index_;
  std::chrono::milliseconds timeout_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
};

}  // namespace

bool nccl_available() { return true; }

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

std::unique_ptr<Communicator> make_nccl_communicator(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                     int device_index, std::chrono::milliseconds timeout,
                                                     const std::string& key) {
  return std::make_unique<NcclCommunicator>(store, rank, size, device_index, timeout, key);
}

#else  // no NCCL in this build

bool nccl_available() { return false; }

int cuda_device_count() { return 0; }

std::unique_ptr<Communicator> make_nccl_communicator(const c10::intrusive_ptr<c10d::Store>&, int, int, int,
                                                     std::chrono::milliseconds, const std::string&) {
  throw CommunicatorError("this rlx build has no NCCL backend (CMake found no CUDA toolkit with NCCL)");
}

#endif

}  // namespace rlx
