// Where `plot` looks for its package and which Pythons it tries, on fake checkout and install trees
// (the installed program itself is exercised in tests/python/test_install.py).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cli/plots_home.h"
#include "tests/test_support.h"

namespace offloadbench::cli {

namespace fs = std::filesystem;

namespace {

struct Tree {
  fs::path root{testing::temp_path("ob_plots_home")};
  Tree() { fs::create_directories(root); }
  ~Tree() { fs::remove_all(root); }
  void add(const fs::path& relative) {
    fs::create_directories((root / relative).parent_path());
    std::ofstream(root / relative) << "";
  }
};

}  // namespace

TEST(PlotsHome, TheInstalledCopyBesideTheProgramComesBeforeTheSourceTree) {
  Tree tree;
  tree.add("prefix/share/offloadbench/plots/__main__.py");
  tree.add("src/plots/__main__.py");
  const auto home =
      find_plots_home(tree.root / "prefix/bin", "../share/offloadbench", tree.root / "src");
  ASSERT_TRUE(home);
  EXPECT_EQ(home->root, (tree.root / "prefix/share/offloadbench").lexically_normal());
  EXPECT_FALSE(home->checkout);
}

TEST(PlotsHome, AProgramWithNoInstalledCopyUsesItsCheckout) {
  Tree tree;
  tree.add("src/plots/__main__.py");
  tree.add("prefix/share/offloadbench/plots/README");  // a folder without the package is not a copy
  const auto home =
      find_plots_home(tree.root / "src/build/release", "../share/offloadbench", tree.root / "src");
  ASSERT_TRUE(home);
  EXPECT_EQ(home->root, tree.root / "src");
  EXPECT_TRUE(home->checkout);
  EXPECT_FALSE(
      find_plots_home(tree.root / "prefix/bin", "../share/offloadbench", tree.root / "gone"));
}

TEST(PlotsHome, OffloadbenchPythonIsTheOnlyCandidateWhenSet) {
  Tree tree;
  tree.add(".venv/bin/python");
  const auto candidates = python_candidates("/opt/py/bin/python3", {tree.root, true});
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].path, "/opt/py/bin/python3");
  EXPECT_TRUE(candidates[0].explicit_choice);
  EXPECT_EQ(candidates[0].origin, "OFFLOADBENCH_PYTHON='/opt/py/bin/python3'");
}

TEST(PlotsHome, ACheckoutTriesItsVenvThenPython3AndAnInstallOnlyPython3) {
  Tree tree;
  tree.add(".venv/bin/python");
  const auto in_checkout =
      python_candidates("", {tree.root, true});  // set but empty counts as unset
  ASSERT_EQ(in_checkout.size(), 2u);
  EXPECT_EQ(in_checkout[0].path, (tree.root / ".venv/bin/python").string());
  EXPECT_EQ(in_checkout[1].path, "python3");
  EXPECT_FALSE(in_checkout[0].explicit_choice || in_checkout[1].explicit_choice);

  const auto installed =
      python_candidates(nullptr, {tree.root, false});  // a .venv there is not ours
  ASSERT_EQ(installed.size(), 1u);
  EXPECT_EQ(installed[0].path, "python3");

  fs::remove_all(tree.root / ".venv");
  EXPECT_EQ(python_candidates(nullptr, {tree.root, true}).size(), 1u);
}

TEST(PlotsHome, TheNoMatplotlibLineSaysWhatToInstallAndOnlyACheckoutMentionsSetup) {
  const auto installed = no_matplotlib_line({"'python3' from PATH has no matplotlib"}, false);
  EXPECT_NE(installed.find("('python3' from PATH has no matplotlib)"), std::string::npos)
      << installed;
  EXPECT_NE(installed.find("apt install python3-matplotlib"), std::string::npos) << installed;
  EXPECT_NE(installed.find("pip install matplotlib"), std::string::npos) << installed;
  EXPECT_EQ(installed.find("scripts/setup"), std::string::npos) << installed;
  EXPECT_EQ(installed.find('\n'), std::string::npos);
  const auto checkout = no_matplotlib_line({"a has no matplotlib", "b cannot be started"}, true);
  EXPECT_NE(checkout.find("(a has no matplotlib; b cannot be started)"), std::string::npos)
      << checkout;
  EXPECT_NE(checkout.find("scripts/setup"), std::string::npos) << checkout;
}

}  // namespace offloadbench::cli
