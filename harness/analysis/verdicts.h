// "Are my numbers right?": a verdict on each headline figure of a results file, with its evidence.
//   healthy            within its ceiling (and the share of it the row expects, when it says), and
//   not
//                      short of a reference run of the same GPU model and link; nothing recorded
//                      limits it
//   below expectation  short of the reference or the expected share, or limited by something the
//   run
//                      recorded (the causes below), each cause named
//   impossible         above its physical ceiling, broken by a self-check, or failed its own
//   validation:
//                      never printed as a figure, its reasons are
// The causes read only what the rows and the context record (docs/results-schema.md): the link's
// trained vs maximum generation and width, NUMA nodes, clocks, persistence, other processes, THP,
// the CPU governor, the BLAS core type, cpu_all vs cpu_1t, the spread of the repetitions.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

// A committed (or the user's own) run that verdicts compare with: matched by GPU model and link.
struct ReferenceRun {
  std::string file;  // as the summary names it
  nlohmann::json doc;
};

// Every *.json results file under `dir` (not the -info/-pytorch side files); unreadable ones are
// left out. An empty list when the folder does not exist.
std::vector<ReferenceRun> load_reference_runs(const std::string& dir);

// The reference for GPU `device` of `results`: a run of the same GPU model whose link has the same
// maximum generation and width, not `results` itself; nullptr when there is none.
const ReferenceRun* matching_reference(const nlohmann::json& results, int device,
                                       const std::vector<ReferenceRun>& references);

namespace verdict_limits {
constexpr double kReferenceMargin =
    0.10;  // healthy down to 10% below the reference's slowest repetition
constexpr double kCeilingSlack =
    1.05;  // a rate above 1.05 × its ceiling is impossible (invariants' margin)
}  // namespace verdict_limits

// One verdict per headline label (rows with a "headline" field; its largest size), in label order.
// Each: label, name, device (an index, or "cpu"), rate, unit ("B/s" or "FLOP/s"), verdict
// ("healthy", "below expectation", "impossible"), causes (strings: why below, or why impossible),
// evidence (a string: share of the ceiling, the reference's figure), reference (its file, or null).
// `results` should hold its analysis block: the self-checks' broken rows are read from it.
nlohmann::json judge_headlines(const nlohmann::json& results,
                               const std::vector<ReferenceRun>& references);

// "55.30 GB/s", "27.1 GFLOP/s": a rate with its SI prefix.
std::string rate_text(double value, const char* unit);

// What the machine itself will limit, before any run, from a context block (`info`): one line each,
// e.g. "GPU 0: this link will cap copies at 15.8 GB/s: trained Gen4 x8 in a Gen5 x16 slot".
std::vector<std::string> machine_limits(const nlohmann::json& context);

}  // namespace offloadbench
