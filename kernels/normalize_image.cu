// CUDA half of the image-batch normalize (kernels/normalize_image.h): one thread per pixel reads
// its C interleaved bytes and writes one element to each of the C planes, so the writes of a warp
// are coalesced per plane. A 2-D grid: y walks the images, x (grid-strided) the pixels of one, so
// no thread divides a 64-bit index to find its image. The twin of normalize_image_cpu.cpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/normalize_image.h"

namespace offloadbench::gpu {

namespace {

constexpr int kBlockSize = 256;
constexpr std::size_t kMaxBlocks = 1u << 16;  // along x, per image row of the grid
constexpr int kMaxImageBlocks = 65535;        // gridDim.y's limit: larger batches loop over y

// Per-channel scale and bias by value: a launch argument, no constant-memory copy per call.
struct ChannelAffine {
  float scale[kMaxImageChannels];
  float bias[kMaxImageChannels];
};

template <typename T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

// ---- CUDA kernels ----
// out: [batch][C][plane], in: [batch][plane][C].
template <typename T, int C>
__global__ void normalize_hwc_to_chw_kernel(T* out, const std::uint8_t* in, int batch,
                                            std::size_t plane, ChannelAffine affine) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (int image = blockIdx.y; image < batch; image += gridDim.y) {
    const std::uint8_t* pixels = in + static_cast<std::size_t>(image) * plane * C;
    T* planes = out + static_cast<std::size_t>(image) * C * plane;
    for (std::size_t p = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < plane;
         p += stride) {
#pragma unroll
      for (int c = 0; c < C; ++c)
        planes[c * plane + p] = from_float<T>(
            fmaf(static_cast<float>(pixels[p * C + c]), affine.scale[c], affine.bias[c]));
    }
  }
}

// ---- kernel launchers ----
template <typename T, int C>
void launch(T* out, const std::uint8_t* in, int batch, std::size_t plane,
            const ChannelAffine& affine, cudaStream_t stream) {
  const dim3 blocks(static_cast<unsigned>(std::clamp<std::size_t>(
                        (plane + kBlockSize - 1) / kBlockSize, 1, kMaxBlocks)),
                    static_cast<unsigned>(std::clamp(batch, 1, kMaxImageBlocks)));
  normalize_hwc_to_chw_kernel<T, C>
      <<<blocks, kBlockSize, 0, stream>>>(out, in, batch, plane, affine);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void launch_for_channels(T* out, const std::uint8_t* in, int batch, std::size_t plane,
                         const NormalizeParams& p, cudaStream_t stream) {
  ChannelAffine affine{};
  for (int c = 0; c < p.channels; ++c) affine.scale[c] = p.scale[c], affine.bias[c] = p.bias[c];
  switch (p.channels) {
    case 1:
      return launch<T, 1>(out, in, batch, plane, affine, stream);
    case 2:
      return launch<T, 2>(out, in, batch, plane, affine, stream);
    case 3:
      return launch<T, 3>(out, in, batch, plane, affine, stream);
    default:
      return launch<T, 4>(out, in, batch, plane, affine, stream);
  }
}

}  // namespace

void normalize_hwc_to_chw(void* out, NormalizedType type, const std::uint8_t* in, int batch,
                          int height, int width, const NormalizeParams& p, CUstream_st* stream) {
  const std::size_t plane = static_cast<std::size_t>(height) * width;
  if (plane == 0 || batch <= 0) return;
  switch (type) {
    case NormalizedType::fp32:
      return launch_for_channels(static_cast<float*>(out), in, batch, plane, p, stream);
    case NormalizedType::bf16:
      return launch_for_channels(static_cast<__nv_bfloat16*>(out), in, batch, plane, p, stream);
    case NormalizedType::fp16:
      return launch_for_channels(static_cast<__half*>(out), in, batch, plane, p, stream);
  }
}

}  // namespace offloadbench::gpu
