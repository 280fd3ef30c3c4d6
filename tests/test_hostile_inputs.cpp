// The reproductions of issue 17, one test each where the library can be tested directly (the CLI
// side, Ctrl-C included, is tests/python/test_hostile_cli.py): output paths that are not regular
// files, sizes that wrap, deep nesting, an existing file kept until replaced, a second writer,
// field types, Google Benchmark flags, inputs that are not regular files, and one skipped row per
// case. Then issue 38's: links planted where we create files, and an output that is an input.
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/benchmark_flags.h"
#include "cli/child_process.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "harness/regression/ab.h"
#include "harness/regression/compare.h"
#include "harness/results/files.h"
#include "harness/results/results.h"
#include "harness/results/sizes.h"
#include "harness/system_info.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace fs = std::filesystem;

namespace {

// A fresh folder for one test, removed afterwards.
struct Sandbox {
  fs::path dir;
  explicit Sandbox(const std::string& name)
      : dir(fs::temp_directory_path() / fmt::format("ob_{}_{}", name, getpid())) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Sandbox() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir / name);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
  }
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) { return e.what(); }
  return "";
}

nlohmann::json minimal_results() {
  return {{"context", {{"offloadbench", {{"schema_version", kResultsSchemaVersion}}}}},
          {"benchmarks",
           {{{"name", "a/b"},
             {"run_type", "iteration"},
             {"real_time", 1.0},
             {"time_unit", "ns"},
             {"bytes", 4096}}}}};
}

}  // namespace

// 1. A rename replaces whatever is at the path: only a regular file or a new path may be the
// target.
TEST(HostileInputs, OutputIsNeverRenamedOverAFifoLinkOrFolder) {
  Sandbox box("out_paths");
  box.write("kept.json", "kept");
  ASSERT_EQ(mkfifo(box.path("fifo").c_str(), 0600), 0);
  fs::create_symlink(box.path("kept.json"), box.path("link.json"));
  fs::create_directory(box.path("folder"));
  for (const char* target :
       {"fifo", "link.json", "folder", "nodir/x.json", "kept.json/x", "new/"}) {
    EXPECT_THROW(write_file_atomically(box.path(target), "new"), FileError) << target;
    EXPECT_THROW(check_output_path(box.path(target), "--out"), FileError) << target;
  }
  EXPECT_TRUE(fs::is_fifo(box.path("fifo")));
  EXPECT_TRUE(fs::is_symlink(box.path("link.json")));
  EXPECT_EQ(box.read("kept.json"), "kept");
  EXPECT_EQ(box.entries(), 4u) << "no temporary or probe file is left behind";
  write_file_atomically(box.path("kept.json"), "replaced");  // a regular file may be replaced
  EXPECT_EQ(box.read("kept.json"), "replaced");
}

TEST(HostileInputs, OutputIsNeverRenamedOverADeviceNode) {
  Sandbox box("out_device");
  // A device node like /dev/full, made in the sandbox (root only): the real one is never at risk.
  if (mknod(box.path("full").c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0)
    GTEST_SKIP() << "mknod needs root";
  EXPECT_THROW(write_file_atomically(box.path("full"), "x"), FileError);
  EXPECT_TRUE(fs::is_character_file(box.path("full")));
}

// 2. 2^62 elements made n·sizeof(T) wrap in the compute runner: such sizes are refused at parse
// time.
TEST(HostileInputs, SizesAboveTheCapAreRefusedSoNoProductWraps) {
  EXPECT_EQ(parse_size("16384GiB"), kMaxSize);
  EXPECT_THROW(parse_size("16385GiB"), std::invalid_argument);
  EXPECT_THROW(parse_size("4611686018427387904"), std::invalid_argument);
  EXPECT_THROW(parse_size("18446744073709551616"), std::invalid_argument);
  EXPECT_LT(kMaxSize, UINT64_MAX / 64) << "elements × 8 bytes × a few arrays must fit in 64 bits";
  EXPECT_THROW(parse_size_list(""), std::invalid_argument);
}

// 3. A document nested 10,000 deep overflowed the stack of the recursive walks.
TEST(HostileInputs, DeepNestingIsRefusedBeforeParsing) {
  Sandbox box("deep");
  box.write("deep.json", std::string(10000, '[') + std::string(10000, ']'));
  const auto message = message_of([&] { load_results(box.path("deep.json")); });
  EXPECT_NE(message.find("nested deeper than 64"), std::string::npos) << message;
  EXPECT_NE(message.find("deep.json"), std::string::npos) << message;
  EXPECT_EQ(nesting_depth(R"({"a": "[[[[{{{{", "b": [[1]], "c": "\"[["})"), 3u)
      << "brackets in strings do not count";
}

// 5. The reporter used to write an empty document over the old file as soon as the run started.
TEST(HostileInputs, AnExistingResultsFileIsKeptUntilARowReplacesIt) {
  Sandbox box("keep_old");
  box.write("r.json", "the previous run");
  RunDescription description{{"test"}, "quick", 1, "0", {}};
  ResultsReporter reporter(box.path("r.json"), make_run_context(description), 1, false,
                           std::chrono::milliseconds(0));
  reporter.ReportContext(benchmark::BenchmarkReporter::Context{});
  EXPECT_EQ(box.read("r.json"), "the previous run")
      << "a run killed now must not have destroyed it";
  reporter.ReportRuns({testing::synthetic_run("synthetic/first")});
  EXPECT_EQ(load_results(box.path("r.json"))["benchmarks"].size(), 1u);
}

TEST(HostileInputs, ASecondWriterOfTheSameFileIsRefused) {
  Sandbox box("lock");
  {
    OutputLock first(box.path("r.json"));
    const auto message = message_of([&] { OutputLock second(box.path("r.json")); });
    EXPECT_NE(message.find("another offloadbench run is writing"), std::string::npos) << message;
  }
  EXPECT_EQ(box.entries(), 0u) << "the lock file goes with the lock";
  OutputLock again(box.path("r.json"));  // and the path can be claimed again
}

// 6. A field of the wrong type used to reach nlohmann's get<> deep inside the analysis.
TEST(HostileInputs, FieldTypesAreCheckedOnLoadWithFileRowAndField) {
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"bytes", "many"},
                                                           {"skipped", "no"},
                                                           {"real_time", "fast"},
                                                           {"time_unit", "parsec"},
                                                           {"validated", "yes"},
                                                           {"bytes", -1},
                                                           {"device", nlohmann::json::object()}}) {
    auto doc = minimal_results();
    doc["benchmarks"][0][field] = value;
    const auto message = message_of([&] { check_results(doc, "f.json"); });
    EXPECT_NE(message.find("f.json: benchmarks[0] ('a/b')." + field + " is"), std::string::npos)
        << message;
  }
  auto doc = minimal_results();
  doc["context"]["offloadbench"]["schema_version"] = 4294967297ULL;  // 1 after a cast to int
  EXPECT_THROW(check_results(doc, "f.json"), ResultsError);
  EXPECT_NO_THROW(check_results(minimal_results(), "f.json"));
}

// 7. Flags that made Google Benchmark run nothing, print its usage and exit 0, or write elsewhere.
TEST(HostileInputs, GoogleBenchmarkFlagsThatBreakTheFileAreRefused) {
  for (const char* flag :
       {"--benchmark_repetitions=0", "--benchmark_format=xml", "--benchmark_out=/no/dir/x",
        "--benchmark_report_aggregates_only=true", "--benchmark_min_time=x",
        "--benchmark_min_time=-1", "--benchmark_filter=(", "--benchmark_time_unit=parsec",
        "--benchmark_nonsense=1", "--not_benchmark"})
    EXPECT_THROW(cli::check_benchmark_flags({flag}), cli::UsageError) << flag;
  EXPECT_NO_THROW(
      cli::check_benchmark_flags({"--benchmark_filter=host_memcpy", "--benchmark_min_time=0.01",
                                  "--benchmark_enable_random_interleaving=true",
                                  "--benchmark_counters_tabular", "--benchmark_context=a=b"}));
}

// 8. A FIFO hung the reader, /dev/zero grew until bad_alloc, a folder read as an empty file.
TEST(HostileInputs, InputsMustBeRegularFilesOfBoundedSize) {
  Sandbox box("inputs");
  ASSERT_EQ(mkfifo(box.path("fifo.json").c_str(), 0600), 0);
  fs::create_directory(box.path("folder.json"));
  box.write("big.json", std::string(100, ' '));
  EXPECT_NE(
      message_of([&] { read_regular_file(box.path("fifo.json")); }).find("not a regular file"),
      std::string::npos);
  EXPECT_NE(message_of([&] { read_regular_file(box.path("folder.json")); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(message_of([&] { read_regular_file("/dev/zero"); }).find("not a regular file"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              read_regular_file(box.path("big.json"), 10);
            }).find("more than the 10 bytes"),
            std::string::npos);
  EXPECT_THROW(load_results(box.path("fifo.json")), ResultsError);
}

// A case that cannot run says so once, not once per repetition.
TEST(HostileInputs, ASkippedCaseIsOneRowWhateverTheRepetitions) {
  clear_registered_cases();
  register_case(
      {"synthetic/skipped", "synthetic", {}, Clock::host_wall, [](benchmark::State& state) {
         skip_case(state, "no usable GPU: test");
       }});
  const auto rows = iteration_rows(testing::run_registered("synthetic/", 4));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["skipped"], true);
  EXPECT_EQ(rows[0]["skip_reason"], "no usable GPU: test");
  clear_registered_cases();
}

// Issue 38, 1: `ab` opened its logs with O_TRUNC in a folder of a predictable name; a link planted
// there made a root `ab` overwrite the file it pointed to. Nothing we create follows a planted
// link.
TEST(HostileInputs, FilesWeCreateNeverFollowALinkOrReuseAFile) {
  Sandbox box("planted");
  box.write("victim", "precious");
  fs::create_symlink(box.path("victim"), box.path("round001-base.log"));
  EXPECT_THROW(cli::run_child("/bin/sh", {"-c", "echo overwritten"}, box.path("round001-base.log")),
               FileError);
  EXPECT_THROW(create_new_file(box.path("victim")), FileError)
      << "an existing file is never reused";
  EXPECT_EQ(box.read("victim"), "precious");
  fs::create_symlink(box.path("absent"),
                     box.path("r.json.lock"));  // nor created through a lock's link
  EXPECT_THROW({ OutputLock lock(box.path("r.json")); }, FileError);
  EXPECT_FALSE(fs::exists(box.path("absent")));

  EXPECT_EQ(cli::run_child("/bin/sh", {"-c", "echo logged"}, box.path("new.log")).status, 0);
  EXPECT_EQ(box.read("new.log"), "logged\n");
  EXPECT_EQ(fs::status(box.path("new.log")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
}

// Reliability issue, 8: a child that never ends held ab for ever. Past its time limit its whole
// group is stopped, SIGKILL for what ignores SIGTERM, here a shell and the sleep it started.
TEST(HostileInputs, AChildPastItsTimeLimitIsStoppedWithWhatItStarted) {
  Sandbox box("limit");
  const auto end = cli::run_child(
      "/bin/sh",
      {"-c", fmt::format("trap '' TERM; sleep 30 & echo $! > {}; wait", box.path("sleeper"))},
      box.path("log"), 0.3);
  EXPECT_TRUE(end.timed_out);
  EXPECT_EQ(end.status, 128 + SIGKILL);
  EXPECT_GT(end.seconds, 0.3);
  EXPECT_LT(end.seconds, 10.0);  // 0.3 s, then 2 s of grace
  // Gone, or a zombie that init has yet to reap. SIGKILL is sent, not waited for: the process may
  // still show 'R' for a moment on its way out, so it gets a few seconds to get there.
  const auto stat_path = fmt::format("/proc/{}/stat", std::stoi(box.read("sleeper")));
  const auto state_line = [&] {
    std::ifstream stat(stat_path);
    std::string text;
    std::getline(stat, text);
    return text;  // empty once the process is gone
  };
  const auto exited = [](const std::string& text) {
    return text.empty() || text[text.rfind(')') + 2] == 'Z' || text[text.rfind(')') + 2] == 'X';
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string text = state_line();
  while (!exited(text) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    text = state_line();
  }
  EXPECT_TRUE(exited(text)) << text;
}

TEST(HostileInputs, TemporaryFoldersAreNewAndPrivate) {
  Sandbox box("tmpdir");
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", box.dir.c_str(), 1);
  const auto first = make_temporary_folder("offloadbench-ab"),
             second = make_temporary_folder("offloadbench-ab");
  old ? setenv("TMPDIR", saved.c_str(), 1) : unsetenv("TMPDIR");
  EXPECT_NE(first, second);
  for (const auto& folder : {first, second}) {
    EXPECT_EQ(fs::path(folder).parent_path(), box.dir);
    EXPECT_EQ(fs::status(folder).permissions(), fs::perms::owner_all) << folder;
  }
}

// A run killed with SIGKILL cannot remove its folder; the next one removes it, and only such
// folders: a live process's, another prefix's, a file, and names that only look alike stay.
TEST(HostileInputs, FoldersOfKilledRunsAreRemovedByTheNextOne) {
  Sandbox box("abandoned");
  const pid_t dead = fork();  // a pid that surely belongs to no process once reaped
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  int status = 0;
  ASSERT_EQ(waitpid(dead, &status, 0), dead);
  const auto folder = [&](const std::string& name) {
    fs::create_directories(box.path(name + "/inner"));
    box.write(name + "/inner/round001-base.json", "{}");
    return box.path(name);
  };
  const auto killed = folder(fmt::format("offloadbench-ab-{}-aB3xYz", dead));
  const auto alive = folder(fmt::format("offloadbench-ab-{}-q1w2e3", getppid()));
  const auto other_prefix = folder(fmt::format("other-{}-aB3xYz", dead));
  const auto not_that_pattern = folder(fmt::format("offloadbench-ab-{}", dead));
  box.write(fmt::format("offloadbench-ab-{}-zzzzzz", dead), "a file, not a folder");
  const auto made = make_owned_folder(box.dir.string(), "offloadbench-ab");
  EXPECT_FALSE(fs::exists(killed));
  for (const auto& kept : {alive, other_prefix, not_that_pattern})
    EXPECT_TRUE(fs::exists(kept)) << kept;
  EXPECT_TRUE(fs::is_regular_file(box.path(fmt::format("offloadbench-ab-{}-zzzzzz", dead))));
  EXPECT_EQ(
      fs::path(made).filename().string().rfind(fmt::format("offloadbench-ab-{}-", getpid()), 0), 0u)
      << made;
  EXPECT_EQ(fs::status(made).permissions(), fs::perms::owner_all);
}

// Issue 38, 2: `export r.json --out r.json` replaced the input by its own export.
TEST(HostileInputs, AnOutputThatIsAnInputIsRefused) {
  Sandbox box("same_file");
  box.write("r.json", "input");
  box.write("other.json", "other");
  fs::create_hard_link(box.path("r.json"), box.path("hard.json"));
  fs::create_symlink(box.path("r.json"), box.path("soft.json"));
  fs::create_directory(box.path("sub"));
  for (const char* out : {"r.json", "hard.json", "soft.json", "sub/../r.json"}) {
    const auto message = message_of(
        [&] { check_not_same_file(box.path(out), "--out", box.path("r.json"), "FILE"); });
    EXPECT_NE(message.find("is the same file as FILE"), std::string::npos)
        << out << ": " << message;
  }
  EXPECT_THROW(check_not_same_file(box.path("r.json"), "--out", box.path("soft.json"), "FILE"),
               FileError)
      << "an input given through a link is still that file";
  EXPECT_THROW(
      check_not_same_file(box.path("new.md"), "--markdown", box.path("sub/../new.md"), "--out"),
      FileError)
      << "two outputs not written yet: the same name in the same folder";
  EXPECT_NO_THROW(check_not_same_file(box.path("other.json"), "--out", box.path("r.json"), "FILE"));
  EXPECT_NO_THROW(check_not_same_file(box.path("new.json"), "--out", box.path("r.json"), "FILE"));
  EXPECT_NO_THROW(
      check_not_same_file(box.path("new.md"), "--markdown", box.path("sub/new.md"), "--out"));
  EXPECT_EQ(box.read("r.json"), "input");
}

// Reliability round 2, item 11: a writer killed during its atomic write left <file>.tmp.XXXXXX
// (once 203 MB) that nothing removed. The next holder of the file's lock removes its kind, and only
// those.
TEST(HostileInputs, TheNextWriterRemovesTemporariesAKilledWriterLeft) {
  Sandbox box("stale");
  box.write("r.json", "{}");
  for (const char* stale : {"r.json.tmp.AbC123", "r.json.probe.Zz9Zz9"})
    box.write(stale, "half a file");
  for (const char* kept :
       {"r.json.tmp.toolong1", "r.json.tmp.ab-123", "other.json.tmp.AbC123", "r.json.bak"})
    box.write(kept, "not ours to remove");
  fs::create_directory(box.path("r.json.tmp.Dir123"));
  box.write("victim", "precious");
  fs::create_symlink(box.path("victim"), box.path("r.json.tmp.Lnk123"));
  { OutputLock lock(box.path("r.json")); }
  for (const char* stale : {"r.json.tmp.AbC123", "r.json.probe.Zz9Zz9"})
    EXPECT_FALSE(fs::exists(box.path(stale))) << stale;
  for (const char* kept : {"r.json.tmp.toolong1", "r.json.tmp.ab-123", "other.json.tmp.AbC123",
                           "r.json.bak", "r.json.tmp.Dir123", "r.json", "victim"})
    EXPECT_TRUE(fs::exists(box.path(kept))) << kept;
  EXPECT_TRUE(fs::is_symlink(box.path("r.json.tmp.Lnk123"))) << "a link is not a file of ours";
  EXPECT_EQ(box.read("victim"), "precious");
}

// Item 6: SIGTERM while the disk was full: marking the file interrupted threw on the watcher
// thread, which aborted the program (134) with the lock left. The signal's own exit code and one
// line instead.
TEST(HostileInputsDeathTest, AFailureWhileHandlingCtrlCStillExitsWithTheSignalsCode) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        cli::InterruptWatch watch(
            [](int) { throw std::runtime_error("writing 'r.json': No space left on device"); });
        std::raise(SIGTERM);
        sleep(10);  // the watcher exits the process long before this ends
      },
      ::testing::ExitedWithCode(128 + SIGTERM),
      "interrupted, and then: writing 'r.json': No space left on device");
}

// Item 7: OMP_NUM_THREADS=100000 crashed libgomp (SIGSEGV) with the lock left: refused first,
// exit 2.
TEST(HostileInputs, ThreadCountsFromTheEnvironmentAreCheckedBeforeAnyThreadStarts) {
  for (const char* fine : {"", "1", "8", "8,2", "16"})
    EXPECT_EQ(omp_num_threads_problem(fine, 4), "") << fine;
  EXPECT_EQ(omp_num_threads_problem(nullptr, 4), "");
  EXPECT_NE(omp_num_threads_problem("17", 4).find(
                "more threads than this machine can run (4 hardware threads; "
                "at most 16 are accepted)"),
            std::string::npos);
  EXPECT_EQ(omp_num_threads_problem("100000", 4).rfind("asks for", 0), 0u)
      << "after OMP_NUM_THREADS='…'";
  EXPECT_NE(omp_num_threads_problem("8,100000", 4).find("more threads"), std::string::npos)
      << "any nesting level";
  EXPECT_NE(omp_num_threads_problem("99999999999999999999", 4).find("more threads"),
            std::string::npos);
  for (const char* ignored :
       {"0", "abc", "8,", ",8", " 8", "-1", "4.5"})  // libgomp ignores them and warns
    EXPECT_EQ(omp_num_threads_problem(ignored, 4), "") << ignored;
  EXPECT_EQ(max_threads_accepted(0), 4u) << "an unknown count still allows a few";
}

// Issue 54, 8 and 10: the context's and the analysis's fields are typed too; the rows of one name
// must agree on their unit and thread count (they are pooled), a time needs its unit, and no time
// is negative.
TEST(HostileInputs, ContextAnalysisAndPooledRowsAreCheckedOnLoad) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](auto& d) { d["context"]["host"]["memory_total_bytes"] = "lots"; },
       "context.host.memory_total_bytes is"},
      {[](auto& d) { d["context"]["cuda"]["gpus"][0]["pcie_link"] = nlohmann::json::array({16}); },
       "context.cuda.gpus[0].pcie_link is"},
      {[](auto& d) { d["analysis"]["headlines"] = nlohmann::json::array({1}); },
       "analysis.headlines[0] is"},
      {[](auto& d) { d["analysis"]["crossovers"] = nlohmann::json::object(); },
       "analysis.crossovers is"},
      {[](auto& d) { d["analysis"]["speedups"][0]["speedup"] = nullptr; },
       "analysis.speedups[0].speedup is"},
      {[](auto& d) { d["benchmarks"][0]["real_time"] = -1.0; },
       "benchmarks[0] ('a/b').real_time is -1.0, below"},
      {[](auto& d) { d["benchmarks"][0].erase("time_unit"); },
       "benchmarks[0] ('a/b') has a time but no 'time_unit'"},
      {[](auto& d) {
         d["benchmarks"].push_back(d["benchmarks"][0]);
         d["benchmarks"][1]["time_unit"] = "us";
       },
       "benchmarks[1] ('a/b').time_unit is \"us\", but benchmarks[0] of the same name has \"ns\""},
      {[](auto& d) {
         d["benchmarks"][0]["threads"] = 1;
         d["benchmarks"].push_back(d["benchmarks"][0]);
         d["benchmarks"][1]["threads"] = 2;
       },
       "benchmarks[1] ('a/b').threads is 2, but benchmarks[0] of the same name has 1"}};
  for (const auto& [change, expected] : cases) {
    auto doc = minimal_results();
    change(doc);
    const auto message = message_of([&] { check_results(doc, "f.json"); });
    EXPECT_NE(message.find("f.json: " + expected), std::string::npos) << message;
  }
}

// Issue 54, 3: a backtick in a name closed its code span, and what followed was Markdown (raw
// <img>).
TEST(HostileInputs, MarkdownKeepsNamesInsideTheirCodeSpans) {
  const std::string hostile = "x` <img src=x onerror=alert(1)> `y";
  AbRow row;
  row.name = hostile;
  row.reason = "<img src=y>";
  AbOutcome outcome;
  outcome.rows = {row};
  const auto md = ab_markdown(outcome, {"<img src=z>"});
  EXPECT_NE(md.find("| ``" + hostile + "`` |"), std::string::npos) << md;
  EXPECT_EQ(md.find("<img src=y>"), std::string::npos) << md;
  EXPECT_EQ(md.find("<img src=z>"), std::string::npos) << md;
}

// Issue 54, 10: a time of 1e308 against a real one printed "+inf%".
TEST(HostileInputs, AHugeChangeIsAFactorNotInfinity) {
  EXPECT_EQ(format_percent(0.052), "+5.2%");
  EXPECT_EQ(format_percent(1e306), "×1e+306");
  EXPECT_EQ(format_percent(std::numeric_limits<double>::infinity()), "—");
}

}  // namespace offloadbench
