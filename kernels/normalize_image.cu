// CUDA half of the image-batch normalize (kernels/normalize_image.h): one thread per pixel reads
// its C interleaved bytes and writes one element to each of the C planes, so the writes of a warp
// are coalesced per plane; a grid-stride loop covers any batch. The twin of normalize_image_cpu.cpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/normalize_image.h"

namespace offloadbench::gpu {

namespace {

constexpr int kBlockSize = 256;
constexpr std::size_t kMaxBlocks = 1u << 16;

// Per-channel scale and bias by value: a launch argument, no constant-memory copy per call.
struct ChannelAffine {
  float scale[kMaxImageChannels];
  float bias[kMaxImageChannels];
};

template <typename T> __device__ T from_float(float v);
template <> __device__ float from_float<float>(float v) { return v; }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __half from_float<__half>(float v) { return __float2half_rn(v); }

// ---- CUDA kernels ----
// out: [batch][C][plane], in: [batch][plane][C]; pixels = batch·plane.
template <typename T, int C>
__global__ void normalize_hwc_to_chw_kernel(T* out, const std::uint8_t* in, std::size_t pixels, std::size_t plane,
                                            ChannelAffine affine) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pixels; i += stride) {
    const std::size_t image = i / plane, pixel = i % plane;
    T* o = out + image * C * plane + pixel;
#pragma unroll
    for (int c = 0; c < C; ++c) o[c * plane] = from_float<T>(fmaf(static_cast<float>(in[i * C + c]), affine.scale[c], affine.bias[c]));
  }
}

// ---- kernel launchers ----
template <typename T, int C>
void launch(T* out, const std::uint8_t* in, std::size_t pixels, std::size_t plane, const ChannelAffine& affine,
            cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(std::clamp<std::size_t>((pixels + kBlockSize - 1) / kBlockSize, 1, kMaxBlocks));
  normalize_hwc_to_chw_kernel<T, C><<<blocks, kBlockSize, 0, stream>>>(out, in, pixels, plane, affine);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void launch_for_channels(T* out, const std::uint8_t* in, std::size_t pixels, std::size_t plane,
                         const NormalizeParams& p, cudaStream_t stream) {
  ChannelAffine affine{};
  for (int c = 0; c < p.channels; ++c) affine.scale[c] = p.scale[c], affine.bias[c] = p.bias[c];
  switch (p.channels) {
    case 1: return launch<T, 1>(out, in, pixels, plane, affine, stream);
    case 2: return launch<T, 2>(out, in, pixels, plane, affine, stream);
    case 3: return launch<T, 3>(out, in, pixels, plane, affine, stream);
    default: return launch<T, 4>(out, in, pixels, plane, affine, stream);
  }
}

}  // namespace

void normalize_hwc_to_chw(void* out, NormalizedType type, const std::uint8_t* in, int batch, int height, int width,
                          const NormalizeParams& p, CUstream_st* stream) {
  const std::size_t plane = static_cast<std::size_t>(height) * width, pixels = plane * batch;
  if (pixels == 0) return;
  switch (type) {
    case NormalizedType::fp32: return launch_for_channels(static_cast<float*>(out), in, pixels, plane, p, stream);
    case NormalizedType::bf16: return launch_for_channels(static_cast<__nv_bfloat16*>(out), in, pixels, plane, p, stream);
    case NormalizedType::fp16: return launch_for_channels(static_cast<__half*>(out), in, pixels, plane, p, stream);
  }
}

}  // namespace offloadbench::gpu
