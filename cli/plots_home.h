// Where `plot` finds its Python package and which Pythons it tries, for the program run from the
// build tree of a checkout and for an installed copy (`cmake --install`, the Debian package). The
// installed layout mirrors the checkout's: <datadir>/offloadbench holds plots/ and
// docs/results.schema.json, as the source tree does, so the package finds the schema the same way
// in both.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace offloadbench::cli {

struct PlotsHome {
  std::filesystem::path root;  // the folder holding plots/, put on PYTHONPATH
  bool checkout = false;       // the source tree this program was built from, not an installed copy
};

// The installed layout first (`installed_root`, relative to the program's folder, e.g.
// ../share/offloadbench), then the source tree; nullopt when neither holds plots/__main__.py.
std::optional<PlotsHome> find_plots_home(const std::filesystem::path& program_dir,
                                         const std::filesystem::path& installed_root,
                                         const std::filesystem::path& source_dir);

// The folder this program was started from (/proc/self/exe, links resolved); empty when unknown.
std::filesystem::path program_dir();

struct PythonCandidate {
  std::string path;
  std::string origin;    // how it was chosen, for messages: "OFFLOADBENCH_PYTHON='…'", …
  bool explicit_choice;  // the user named it: its failure is reported, no other Python is tried
};

// OFFLOADBENCH_PYTHON alone when it is set (the user's choice wins, in a checkout too); else the
// checkout's .venv when there is one (what scripts/setup makes), then python3 from PATH.
std::vector<PythonCandidate> python_candidates(const char* offloadbench_python,
                                               const PlotsHome& home);

// The one line for "no Python tried can load matplotlib", given why each failed ("'python3' from
// PATH has no matplotlib"): what to install, or which variable to set.
std::string no_matplotlib_line(const std::vector<std::string>& failures, bool checkout);

}  // namespace offloadbench::cli
