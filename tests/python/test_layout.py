"""The layout's rules, checked on every C++ source in the tree: includes point downwards only, no
file name is used in two folders, and the environment is read in one place, the registry of
cli/environment.cpp. The layers (docs/building.md, "Layout"), lowest first:

  kernels/cuda        CUDA helpers                     includes only itself
  kernels             ops: GPU kernel + CPU twin       kernels/cuda
  harness/results     the results file format          itself only
  harness/analysis    reads results files              harness/results
  harness, harness/cuda   run-time harness, GPU timing harness/results, kernels/cuda
  benchmarks          case tables and runners          kernels, harness (not analysis)
  benchmarks/cli      the command line, on top         anything but tests
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# Folder -> the folders its files may include from (a folder always includes from itself).
ALLOWED = {
    "kernels/cuda": [],
    "kernels": ["kernels/cuda"],
    "harness/results": [],
    "harness/analysis": ["harness/results"],
    "harness": ["harness/results", "kernels/cuda"],
    "harness/cuda": ["harness", "harness/results", "kernels/cuda"],
    "harness/regression": ["harness/analysis", "harness/results"],
    "benchmarks": ["kernels", "kernels/cuda", "harness", "harness/cuda", "harness/results"],
    "cli": [
        "benchmarks",
        "benchmarks/*",
        "kernels",
        "kernels/cuda",
        "harness",
        "harness/cuda",
        "harness/results",
        "harness/analysis",
        "harness/regression",
    ],
}
# A family's folder is a layer of its own with the runners' rules, and may include the other families'
# headers (peer reuses transfer's cases). Its analysis files (and the generated list of them) read files
# only: they sit on harness/analysis, beside the runners, and include nothing of theirs.
FAMILY = ALLOWED["benchmarks"] + ["benchmarks", "benchmarks/*"]
ANALYSIS = ["harness/analysis", "harness/results"]


def is_analysis_file(relative):
    stem = pathlib.PurePosixPath(relative).stem
    return stem.endswith("_analysis") or stem == "family_analyses"


def allowed_for(relative, allowed):
    """(the layers `relative` may include from, whether it is a family's analysis file); None: no layer."""
    folder = folder_of(relative)
    if is_analysis_file(relative) and folder.startswith("benchmarks"):
        return ANALYSIS, True
    if folder in allowed:
        return allowed[folder], False
    if folder.startswith("benchmarks/") and folder.count("/") == 1:
        return FAMILY, False
    return None, False


def sources(*tops):
    for top in tops:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and "build" not in path.relative_to(ROOT).parts:
                yield path


def folder_of(relative):
    return str(pathlib.PurePosixPath(relative).parent)


def upward_includes(files, allowed, root=ROOT):
    """(file, included) pairs that break `allowed`; a generated header (not in the tree) is exempt."""
    broken = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        folder = folder_of(rel)
        layers, analysis = allowed_for(rel, allowed)
        for included in INCLUDE.findall(path.read_text()):
            if not (root / included).exists():
                continue
            target = folder_of(included)
            if (
                analysis
            ):  # its own kind only: harness/analysis, the results format, other analysis files
                ok = target in layers or (
                    target.startswith("benchmarks") and is_analysis_file(included)
                )
            else:
                ok = (
                    target == folder
                    or target in (layers or [])
                    or ("benchmarks/*" in (layers or []) and target.startswith("benchmarks/"))
                )
            if not ok:
                broken.append((rel, included))
    return broken


def test_every_source_folder_has_a_layer():
    rels = [
        p.relative_to(ROOT).as_posix() for p in sources("kernels", "harness", "benchmarks", "cli")
    ]
    without = sorted({folder_of(r) for r in rels if allowed_for(r, ALLOWED)[0] is None})
    assert not without, f"folders without a layer in this test: {without}"


def test_includes_point_downwards_only():
    broken = upward_includes(sources("kernels", "harness", "benchmarks", "cli"), ALLOWED)
    assert not broken, "includes against the layering:\n" + "\n".join(
        f"  {f} includes {i}" for f, i in broken
    )


def test_the_check_sees_an_upward_include(tmp_path):
    """The rule is not vacuous: a kernel that includes the harness is caught, one that includes a
    CUDA helper is not."""
    (tmp_path / "kernels" / "cuda").mkdir(parents=True)
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "measure.h").write_text("#pragma once\n")
    (tmp_path / "kernels" / "cuda" / "cuda_check.h").write_text("#pragma once\n")
    kernel = tmp_path / "kernels" / "op.cu"
    kernel.write_text('#include "kernels/cuda/cuda_check.h"\n#include "harness/measure.h"\n')
    assert upward_includes([kernel], ALLOWED, tmp_path) == [("kernels/op.cu", "harness/measure.h")]


def test_a_family_analysis_may_not_include_its_runners(tmp_path):
    """A family's analysis reads files only: including its own case table (which pulls in Google
    Benchmark and CUDA) is caught; including harness/analysis is not."""
    (tmp_path / "benchmarks" / "fill").mkdir(parents=True)
    (tmp_path / "harness" / "analysis").mkdir(parents=True)
    (tmp_path / "harness" / "analysis" / "family_analysis.h").write_text("#pragma once\n")
    (tmp_path / "benchmarks" / "fill" / "fill_cases.h").write_text("#pragma once\n")
    analysis = tmp_path / "benchmarks" / "fill" / "fill_analysis.cpp"
    analysis.write_text(
        '#include "harness/analysis/family_analysis.h"\n#include "benchmarks/fill/fill_cases.h"\n'
    )
    assert upward_includes([analysis], ALLOWED, tmp_path) == [
        ("benchmarks/fill/fill_analysis.cpp", "benchmarks/fill/fill_cases.h")
    ]


@pytest.mark.parametrize("tops", [("kernels", "harness", "benchmarks", "cli", "tests")])
def test_no_file_name_in_two_folders(tops):
    """`mlp.h` in two folders sends people and tools to the wrong one: a stem lives in one folder."""
    folders_by_stem = {}
    for path in sources(*tops):
        rel = path.relative_to(ROOT)
        folders_by_stem.setdefault(path.stem, set()).add(rel.parent.as_posix())
    clashes = {stem: sorted(f) for stem, f in folders_by_stem.items() if len(f) > 1}
    assert not clashes, f"names used in more than one folder: {clashes}"


# ---- the harness and the plots name no family ----

STRING_LITERAL = {
    ".py": re.compile(
        r"""(?<![\w"'])(?:"([^"\\\n]*(?:\\.[^"\\\n]*)*)"|'([^'\\\n]*(?:\\.[^'\\\n]*)*)')"""
    ),
    ".cpp": re.compile(r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"'),
}


def families(root=ROOT):
    """A family is a folder of benchmarks/ with a CMakeLists.txt of its own."""
    return sorted(p.parent.name for p in (root / "benchmarks").glob("*/CMakeLists.txt"))


def code_lines(path):
    """The file's lines without comments and docstrings (a comment may say which family a rule came from)."""
    text = path.read_text()
    if path.suffix == ".py":
        text = re.sub(r'("""|\'\'\')[\s\S]*?\1', "", text)
        return [line.split("#")[0] for line in text.splitlines()]
    text = re.sub(r"/\*[\s\S]*?\*/", "", text)
    return [line.split("//")[0] for line in text.splitlines()]


def family_names_in(paths, names, root=ROOT):
    """(file, what) for each file whose name has a family as a word, or whose code has a string that is a
    family's name or starts with '<family>/' (how rows are picked by family or compare group)."""
    found = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        words = set(path.stem.split("_"))
        found += [(rel, f"file name: {name}") for name in names if name in words]
        literal = STRING_LITERAL[".py" if path.suffix == ".py" else ".cpp"]
        for line in code_lines(path):
            for match in literal.finditer(line):
                text = next(g for g in match.groups() if g is not None)
                found += [
                    (rel, f'"{text}"')
                    for name in names
                    if text == name or text.startswith(name + "/")
                ]
    return found


def harness_and_plots(root=ROOT):
    yield from (p for p in sorted((root / "harness").rglob("*")) if p.suffix in SOURCE_SUFFIXES)
    yield from sorted((root / "plots").rglob("*.py"))


def test_the_harness_and_the_plots_name_no_family():
    assert len(families()) >= 6
    found = family_names_in(harness_and_plots(), families())
    assert not found, "a family named outside its folder:\n" + "\n".join(
        f"  {f}: {w}" for f, w in found
    )


def test_the_check_sees_a_family_named_in_the_plots(tmp_path):
    """Not vacuous: a chart module named after a family, a row picked by family or by a compare group of
    one, are caught; a family in a comment or a docstring, or a word that only contains it, is not."""
    (tmp_path / "benchmarks" / "fill").mkdir(parents=True)
    (tmp_path / "benchmarks" / "fill" / "CMakeLists.txt").write_text("")
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "fill_charts.py").write_text('"""fill charts"""\n')
    (tmp_path / "plots" / "timing.py").write_text(
        '"""Draws fill rows."""\n# the fill family has its own\nx = r.get("family") == "fill"\ny = "fill/bytes"\n'
        'z = "refill"\n'
    )
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "analysis.cpp").write_text(
        '// fill: see its folder\nif (f == "fill") {}\n'
    )
    found = family_names_in(harness_and_plots(tmp_path), families(tmp_path), tmp_path)
    assert sorted(found) == sorted(
        [
            ("harness/analysis.cpp", '"fill"'),
            ("plots/fill_charts.py", "file name: fill"),
            ("plots/timing.py", '"fill"'),
            ("plots/timing.py", '"fill/bytes"'),
        ]
    )


# ---- the environment is read in one place ----

REGISTRY = "cli/environment.cpp"
PROGRAM = ("kernels", "harness", "benchmarks", "cli")
DECLARED = re.compile(
    r'^\s*\{"([A-Z][A-Z0-9_]*)",\s*"', re.MULTILINE
)  # {"NAME", "option", "doc", parser}
GETENV = re.compile(r"\b(?:secure_)?getenv\s*\(([^)]*)\)")
SETENV = re.compile(r"\b(?:setenv|putenv)\s*\(\s*\"([A-Z][A-Z0-9_]*)")
NAME_LITERAL = re.compile(r'^\s*"([A-Z][A-Z0-9_]*)"\s*$')
# What the tests read for themselves (scripts/gpu-check sets them): not the program's variables.
TESTS_OWN = {"OFFLOADBENCH_GPU_TEST_PRECISIONS", "OFFLOADBENCH_SHORT_GPU_TESTS"}


def registered(root=ROOT):
    return DECLARED.findall((root / REGISTRY).read_text())


def environment_reads_outside_the_registry(root=ROOT):
    """(file, what) for each read of the environment the registry does not own. In the program: any
    getenv but of a variable the registry lists (the standard ones it passes on, as TMPDIR), and none at
    all in kernels/; a setenv of an OFFLOADBENCH_ variable it does not list. In tests/: a getenv of an
    OFFLOADBENCH_ variable but the tests' own."""
    names = set(registered(root))
    found = []
    for top in PROGRAM + ("tests",):
        for path in sorted((root / top).rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.suffix not in SOURCE_SUFFIXES or rel == REGISTRY:
                continue
            code = "\n".join(code_lines(path))
            for argument in GETENV.findall(code):
                literal = NAME_LITERAL.match(argument)
                name = literal.group(1) if literal else None
                if top == "tests":
                    bad = (name or argument).strip().startswith(
                        ('"OFFLOADBENCH_', "OFFLOADBENCH_")
                    ) and name not in TESTS_OWN
                else:
                    bad = top == "kernels" or name not in names
                if bad:
                    found.append((rel, f"getenv({argument.strip()})"))
            for name in SETENV.findall(code):
                if top != "tests" and name.startswith("OFFLOADBENCH_") and name not in names:
                    found.append((rel, f"setenv({name})"))
    return found


def test_the_environment_is_read_through_the_registry_only():
    assert {"OFFLOADBENCH_CPU_GEMM", "OFFLOADBENCH_INJECT_SLOWDOWN", "OMP_NUM_THREADS"} <= set(
        registered()
    )
    found = environment_reads_outside_the_registry()
    assert not found, f"environment read outside {REGISTRY} (declare it there):\n" + "\n".join(
        f"  {f}: {w}" for f, w in found
    )


def test_the_check_sees_a_read_outside_the_registry(tmp_path):
    """Not vacuous: a kernel reading any variable, the harness reading an undeclared one or one named by a
    constant, and a test reading the program's variable are caught; the cli reading a declared standard
    variable, a test reading its own, and a getenv in a comment are not."""
    for folder in ("cli", "kernels", "harness", "tests"):
        (tmp_path / folder).mkdir()
    (tmp_path / REGISTRY).write_text(
        '{"OFFLOADBENCH_X", "", "doc", parse},\n{"TMPDIR", "", "read: doc", {}},\n'
        "const char* v = std::getenv(name.c_str());\n"
    )
    (tmp_path / "kernels" / "gemm.cpp").write_text('auto t = std::getenv("TMPDIR");\n')
    (tmp_path / "harness" / "inject.cpp").write_text(
        'auto a = std::getenv("OFFLOADBENCH_Y");\nauto b = getenv(kVariable);\n// getenv("OFFLOADBENCH_Z")\n'
        'setenv("OFFLOADBENCH_W", "1", 1);\n'
    )
    (tmp_path / "cli" / "files.cpp").write_text('auto t = std::getenv("TMPDIR");\n')
    (tmp_path / "tests" / "test_gpu.cpp").write_text(
        'auto s = std::getenv("OFFLOADBENCH_SHORT_GPU_TESTS");\nauto p = std::getenv("OFFLOADBENCH_X");\n'
    )
    assert sorted(environment_reads_outside_the_registry(tmp_path)) == sorted(
        [
            ("kernels/gemm.cpp", 'getenv("TMPDIR")'),
            ("harness/inject.cpp", 'getenv("OFFLOADBENCH_Y")'),
            ("harness/inject.cpp", "getenv(kVariable)"),
            ("harness/inject.cpp", "setenv(OFFLOADBENCH_W)"),
            ("tests/test_gpu.cpp", 'getenv("OFFLOADBENCH_X")'),
        ]
    )


def test_help_ends_with_the_registry(run_offloadbench):
    """offloadbench --help's last section lists each declared variable once, in order, on a line under
    100 columns."""
    done = run_offloadbench("--help")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.rstrip("\n").splitlines()
    start = lines.index("Environment:")
    listed = lines[start + 1 :]
    assert [line.split()[0] for line in listed] == registered()
    assert all(line.startswith("  ") and len(line) < 100 for line in listed), listed
