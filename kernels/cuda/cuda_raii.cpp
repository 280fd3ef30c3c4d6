#include "kernels/cuda/cuda_raii.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include <fmt/format.h>

namespace offloadbench {

double elapsed_seconds(const CudaEvent& start, const CudaEvent& end) {
  CUDA_CHECK(cudaEventSynchronize(end.get()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return ms / 1e3;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) CUDA_CHECK_NOTHROW(cudaFree(data_));
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

HostBuffer::HostBuffer(std::size_t bytes, HostMemoryKind kind) : bytes_(bytes), kind_(kind) {
  switch (kind) {
    case HostMemoryKind::pageable:
    case HostMemoryKind::registered:
      data_ = std::malloc(bytes);
      if (!data_) throw std::bad_alloc();
      std::memset(data_, 0, bytes);
      if (kind == HostMemoryKind::registered) {
        const cudaError_t rc = cudaHostRegister(data_, bytes, cudaHostRegisterDefault);
        if (rc != cudaSuccess) {
          std::free(data_);
          data_ = nullptr;
          CUDA_CHECK(rc);
        }
      }
      break;
    case HostMemoryKind::pinned:
      CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocDefault));
      std::memset(data_, 0, bytes);
      break;
    case HostMemoryKind::write_combined:
      CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocWriteCombined));
      std::memset(data_, 0, bytes);
      break;
  }
}

void HostBuffer::release() noexcept {
  if (!data_) return;
  switch (kind_) {
    case HostMemoryKind::pageable:
      std::free(data_);
      break;
    case HostMemoryKind::registered:
      CUDA_CHECK_NOTHROW(cudaHostUnregister(data_));
      std::free(data_);
      break;
    case HostMemoryKind::pinned:
    case HostMemoryKind::write_combined:
      CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
      break;
  }
  data_ = nullptr;
}

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_), kind_(other.kind_) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = other.bytes_;
    kind_ = other.kind_;
  }
  return *this;
}

std::string device_fit_problem(std::size_t bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Keep 5% (at least 256 MiB) free for the context, cuBLAS workspaces and fragmentation.
  const std::size_t margin = std::max<std::size_t>(total_bytes / 20, std::size_t(256) << 20);
  if (bytes + margin > free_bytes)
    return fmt::format("needs {:.1f} MiB of device memory, {:.1f} MiB free", bytes / 1048576.0,
                       free_bytes / 1048576.0);
  return "";
}

}  // namespace offloadbench
