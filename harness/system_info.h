// Facts about the host that every results file records: CPU, memory, BLAS, threads.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace offloadbench {

struct HostInfo {
  std::string hostname;
  std::string cpu_model;
  int logical_cpus = 0;
  int omp_threads = 0;  // what "all threads" means for the CPU cases
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_available_bytes = 0;
  std::string blas_library;  // openblas_get_config() and how it threads: "… (OpenMP)"
  int blas_threads = 0;
  std::string os;
  std::string
      cpu_governor;  // cpufreq scaling_governor of CPU 0 ("performance", "powersave"); "" when none
  std::string
      thp_enabled;  // the bracketed word of transparent_hugepage/enabled; "" when unreadable
};

HostInfo query_host_info();
nlohmann::json to_json(const HostInfo& host);

// Bytes of host memory available now (MemAvailable); 0 when unknown.
std::uint64_t host_memory_available_bytes();
// "" when `bytes_needed` of host memory can be had now with 512 MiB to spare for the rest of the
// process and the system (or when what is available is unknown), else why not.
std::string host_fit_problem(std::uint64_t bytes_needed);

// The most threads a thread-count variable may ask for: 4 per hardware thread. Oversubscribing a
// little is an experiment a user may want; 100,000 OpenMP threads made libgomp crash (SIGSEGV).
unsigned max_threads_accepted(unsigned hardware_threads);
// "" unless OMP_NUM_THREADS's `value` asks, at any nesting level ("8" or "8,2"), for more threads
// than max_threads_accepted; then why, a phrase to follow "OMP_NUM_THREADS='…' " (bad input: exit
// 2). Text that is not a number libgomp ignores itself, with its own warning, before offloadbench
// starts.
std::string omp_num_threads_problem(const char* value, unsigned hardware_threads);

// Current UTC time as ISO 8601 ("2026-11-22T16:30:05Z") and as a file-name stamp
// ("20261122T163005Z").
std::string utc_now_iso8601();
std::string utc_now_stamp();

}  // namespace offloadbench
