// Finding the plots package and the Pythons to run it with (see plots_home.h).
#include "cli/plots_home.h"

#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace offloadbench::cli {

namespace fs = std::filesystem;

namespace {

bool holds_plots(const fs::path& root) {
  std::error_code ignored;
  return fs::is_regular_file(root / "plots" / "__main__.py", ignored);
}

}  // namespace

std::optional<PlotsHome> find_plots_home(const fs::path& program_dir,
                                         const fs::path& installed_root,
                                         const fs::path& source_dir) {
  if (!program_dir.empty()) {
    const auto installed = (program_dir / installed_root).lexically_normal();
    if (holds_plots(installed)) return PlotsHome{installed, false};
  }
  if (!source_dir.empty() && holds_plots(source_dir)) return PlotsHome{source_dir, true};
  return std::nullopt;
}

fs::path program_dir() {
  std::error_code error;
  const auto self = fs::canonical("/proc/self/exe", error);
  return error ? fs::path() : self.parent_path();
}

std::vector<PythonCandidate> python_candidates(const char* offloadbench_python,
                                               const PlotsHome& home) {
  if (offloadbench_python && *offloadbench_python)
    return {
        {offloadbench_python, fmt::format("OFFLOADBENCH_PYTHON='{}'", offloadbench_python), true}};
  std::vector<PythonCandidate> candidates;
  if (home.checkout) {
    const auto venv = home.root / ".venv" / "bin" / "python";
    std::error_code ignored;
    if (fs::exists(venv, ignored))
      candidates.push_back(
          {venv.string(), fmt::format("the project's Python '{}'", venv.string()), false});
  }
  candidates.push_back({"python3", "'python3' from PATH", false});
  return candidates;
}

std::string no_matplotlib_line(const std::vector<std::string>& failures, bool checkout) {
  return fmt::format(
      "offloadbench: plot needs a Python with matplotlib and found none ({}): install it (Debian, "
      "Ubuntu: sudo apt install python3-matplotlib; elsewhere: python3 -m pip install "
      "matplotlib){}, "
      "or set OFFLOADBENCH_PYTHON to a Python that has it",
      fmt::join(failures, "; "), checkout ? ", or run scripts/setup (it makes .venv)" : "");
}

}  // namespace offloadbench::cli
