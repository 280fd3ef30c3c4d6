// The registry of environment variables (cli/environment.h): each variable's good and bad values,
// unset and empty meaning the default, one-line errors naming the variable, the values handed to
// the layers below, and --help's section listing exactly the registry.
#include <stdlib.h>

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/commands.h"
#include "cli/environment.h"

namespace offloadbench::cli {
namespace {

EnvironmentLookup table(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto found = values.find(name);
    return found == values.end() ? std::nullopt : std::optional<std::string>(found->second);
  };
}

EnvironmentSettings parsed(const std::string& name, const std::string& value) {
  return parse_environment(table({{name, value}}));
}

// The one-line message a bad value gives (the test fails when it is accepted).
std::string refusal(const std::string& name, const std::string& value) {
  try {
    parsed(name, value);
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind(name + "='" + value + "' ", 0), 0u)
        << "names the variable and value: " << message;
    return message;
  }
  ADD_FAILURE() << name << "='" << value << "' was accepted";
  return "";
}

TEST(Environment, UnsetAndEmptyVariablesMeanTheDefaults) {
  std::map<std::string, std::string> empty;
  for (const auto& variable : environment_variables()) empty[variable.name] = "";
  for (const auto& lookup : {table({}), table(empty)}) {
    const auto settings = parse_environment(lookup);
    EXPECT_FALSE(settings.remeasure_unsteady);
    EXPECT_FALSE(settings.cpu_gemm.pinned);
    EXPECT_TRUE(settings.inject_slowdown.empty());
    EXPECT_EQ(settings.python, "");
    EXPECT_EQ(settings.pythonpath, "");
  }
}

TEST(Environment, RemeasureUnsteadyIsAWholeNumberOfRepetitions) {
  const std::string name = "OFFLOADBENCH_REMEASURE_UNSTEADY";
  EXPECT_EQ(parsed(name, "0").remeasure_unsteady, 0);
  EXPECT_EQ(parsed(name, "10").remeasure_unsteady, 10);
  EXPECT_EQ(parsed(name, "1000").remeasure_unsteady, 1000);
  for (const char* bad :
       {"abc", "-1", "1001", "+5", " 5", "5 ", "5x", "4.5", "99999999999999999999"})
    EXPECT_NE(refusal(name, bad).find("is not a number of repetitions (0 to 1000)"),
              std::string::npos)
        << bad;
}

TEST(Environment, CpuGemmIsOneOfTheLibrariesThisBuildHas) {
  const std::string name = "OFFLOADBENCH_CPU_GEMM";
  const auto openblas = parsed(name, "OpenBLAS").cpu_gemm;
  EXPECT_TRUE(openblas.pinned);
  EXPECT_EQ(openblas.library, CpuGemmLibrary::openblas);
  EXPECT_FALSE(openblas.packed_inference);
  if (cpu_gemm_available(CpuGemmLibrary::onednn)) {
    const auto onednn = parsed(name, "oneDNN").cpu_gemm;
    EXPECT_EQ(onednn.library, CpuGemmLibrary::onednn);
    EXPECT_FALSE(onednn.packed_inference);
    const auto packed = parsed(name, "oneDNN-packed").cpu_gemm;
    EXPECT_EQ(packed.library, CpuGemmLibrary::onednn);
    EXPECT_TRUE(packed.packed_inference);
  } else {
    EXPECT_NE(refusal(name, "oneDNN").find("this build has no oneDNN"), std::string::npos);
  }
  for (const char* bad :
       {"openblas", "MKL", "OpenBLAS ", "onednn-packed"})  // names are case-sensitive
    EXPECT_NE(refusal(name, bad).find("is not one of OpenBLAS"), std::string::npos) << bad;
}

TEST(Environment, InjectSlowdownIsSubstringPercentRules) {
  const std::string name = "OFFLOADBENCH_INJECT_SLOWDOWN";
  const auto rules = parsed(name, "compute/triad=5,mlp=10%").inject_slowdown;
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].substring, "compute/triad");
  EXPECT_DOUBLE_EQ(rules[0].fraction, 0.05);
  EXPECT_DOUBLE_EQ(rules[1].fraction, 0.10);
  EXPECT_NE(refusal(name, "triad=five")
                .find("has an entry 'triad=five' that is not <substring>=<percent>"),
            std::string::npos);
  refusal(name, "triad=5,");
  refusal(name, "=5");
}

TEST(Environment, PythonAndItsPathAreTakenAsGiven) {
  EXPECT_EQ(parsed("OFFLOADBENCH_PYTHON", "/opt/py/bin/python3").python, "/opt/py/bin/python3");
  EXPECT_EQ(parsed("OFFLOADBENCH_PYTHON", "python3").python, "python3");  // found on PATH when run
  EXPECT_EQ(parsed("PYTHONPATH", "/a:/b").pythonpath, "/a:/b");
}

TEST(Environment, OmpNumThreadsIsCheckedNotKept) {
  for (const char* fine : {"1", "2", "2,1", "abc"})
    EXPECT_NO_THROW(parsed("OMP_NUM_THREADS", fine)) << fine;
  EXPECT_NE(
      refusal("OMP_NUM_THREADS", "100000").find("asks for more threads than this machine can run"),
      std::string::npos);
}

TEST(Environment, PassedOnAndSetVariablesAcceptAnything) {
  for (const char* name : {"TMPDIR", "OFFLOADBENCH_LAYOUT_PAD"})
    EXPECT_NO_THROW(parsed(name, "anything at all")) << name;
}

// Ends with the variable unset and loaded: no rules, as a test binary starts (nothing else loads
// it).
TEST(Environment, LoadingHandsTheValuesToTheLayersBelow) {
  ::setenv("OFFLOADBENCH_INJECT_SLOWDOWN", "triad=5", 1);
  load_environment();
  EXPECT_EQ(environment().inject_slowdown.size(), 1u);
  EXPECT_DOUBLE_EQ(injected_slowdown_fraction("compute/triad/fp32/cpu_1t/1Mi"), 0.05);
  ::unsetenv("OFFLOADBENCH_INJECT_SLOWDOWN");
  load_environment();
  EXPECT_TRUE(environment().inject_slowdown.empty());
  EXPECT_DOUBLE_EQ(injected_slowdown_fraction("compute/triad/fp32/cpu_1t/1Mi"), 0.0);
}

TEST(Environment, InUseListsTheSetVariablesInRegistryOrder) {
  const auto in_use = environment_in_use(table({{"TMPDIR", "/scratch"},
                                                {"OFFLOADBENCH_CPU_GEMM", "OpenBLAS"},
                                                {"OFFLOADBENCH_PYTHON", ""},
                                                {"NOT_OURS", "x"}}));
  ASSERT_EQ(in_use.size(), 2u);
  EXPECT_EQ(in_use[0],
            std::make_pair(std::string("OFFLOADBENCH_CPU_GEMM"), std::string("OpenBLAS")));
  EXPECT_EQ(in_use[1], std::make_pair(std::string("TMPDIR"), std::string("/scratch")));
}

TEST(Environment, HelpListsEachVariableOfTheRegistryOnOneShortLine) {
  std::istringstream help(environment_help());
  std::string line;
  ASSERT_TRUE(std::getline(help, line));
  EXPECT_EQ(line, "Environment:");
  std::set<std::string> names;
  for (const auto& variable : environment_variables()) {
    EXPECT_TRUE(names.insert(variable.name).second) << variable.name << " declared twice";
    EXPECT_FALSE(variable.doc.empty()) << variable.name;
    ASSERT_TRUE(std::getline(help, line)) << "no line for " << variable.name;
    EXPECT_EQ(line.rfind("  " + variable.name + " ", 0), 0u) << line;
    EXPECT_NE(line.find(variable.option + (variable.option.empty() ? "" : " ") + variable.doc),
              std::string::npos)
        << line;
    EXPECT_LT(line.size(), 100u) << line;
  }
  EXPECT_FALSE(std::getline(help, line)) << "a line for no variable: " << line;
}

}  // namespace
}  // namespace offloadbench::cli
