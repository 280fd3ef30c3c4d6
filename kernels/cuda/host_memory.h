// How host memory was obtained: the main parameter of every transfer measurement.
#pragma once

namespace offloadbench {

enum class HostMemoryKind {
  pageable,    // malloc, touched before use: the driver stages it through a pinned bounce buffer
  pinned,      // cudaHostAlloc(cudaHostAllocDefault): the copy engine reads it directly
  registered,  // malloc + cudaHostRegister: pinned after the fact
  write_combined,  // cudaHostAlloc(cudaHostAllocWriteCombined): fast H2D, very slow for the CPU to
                   // read
};

inline const char* to_string(HostMemoryKind kind) {
  switch (kind) {
    case HostMemoryKind::pageable:
      return "pageable";
    case HostMemoryKind::pinned:
      return "pinned";
    case HostMemoryKind::registered:
      return "registered";
    case HostMemoryKind::write_combined:
      return "write_combined";
  }
  return "unknown";
}

}  // namespace offloadbench
