// `run` measures a case again when its repetitions spread too much: the cases whose coefficient of
// variation exceeds the self-check's limit (invariant_limits::kUnsteadyCv) run once more, in one
// fresh process, with more repetitions. Their first rows stay in the file as run_type "superseded"
// (every reader skips them; the file keeps what was seen); the analysis flags a case still unsteady
// after that.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/child_process.h"

namespace offloadbench::cli {

// The unsteady cases of `doc` (three or more repetitions, cv above the limit), most unsteady first,
// at most `max_cases` of them, by their row names.
std::vector<std::string> unsteady_case_names(const nlohmann::json& doc, std::size_t max_cases);

// `doc` with the iteration rows of `names` in `again` appended (repetition_index from 0,
// "remeasured": true) and its own rows of those names (and their aggregates) turned into run_type
// "superseded", with the cv that caused it; cases `again` does not hold are left as they were.
nlohmann::json with_remeasured(nlohmann::json doc, const nlohmann::json& again,
                               const std::vector<std::string>& names);

struct RemeasurePlan {
  ChildRun
      child;  // what the run measured (suites, device, sizes); repetitions and out are set here
  int repetitions = 10;  // for the second measurement; 0: never measure again
  std::size_t max_cases = 64;
  std::string out;  // the results file: the child's files go beside it
};

// Measures the unsteady cases of `doc` again as `plan` says and returns the document with their
// rows replaced (with_remeasured). A failed child leaves `doc` as it was and says so on stderr.
nlohmann::json remeasure_unsteady(const nlohmann::json& doc, const RemeasurePlan& plan);

}  // namespace offloadbench::cli
