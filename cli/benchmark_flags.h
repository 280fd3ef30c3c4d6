// Which Google Benchmark flags `run` passes on after `--`, checked before Google Benchmark sees
// them: it prints its usage and exits 0 on a bad value, and some flags would break the results
// file.
#pragma once
#include <string>
#include <vector>

namespace offloadbench::cli {

// Throws UsageError on the first flag that is unknown, has a bad value, or would change what the
// results file holds or where it goes (--benchmark_repetitions, _out, _format,
// _report_aggregates_only, …), naming the offloadbench option to use instead where there is one.
void check_benchmark_flags(const std::vector<std::string>& flags);

}  // namespace offloadbench::cli
