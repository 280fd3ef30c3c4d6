"""The sources' own references: every path into the docs or lab folders that a source file names exists,
and no source file points at an experiment ("measurement N", "session N", "stop N") or dates its
comments. The records of experiments live in the lab's records; a comment says why, and may name the
record's file for the evidence, never a run in it.

Sources: C++, CUDA, CMake, Python, shell and workflow files in the code folders, in tests (not tests/data
or the pytest fixtures, whose dated contents are data) and the scripts of scripts, ci and .ci. The docs,
lab and results folders hold prose and records, not sources. Needs no binary.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDERS = [
    "benchmarks",
    "cli",
    "cmake",
    "harness",
    "kernels",
    "plots",
    "scripts",
    "ci",
    ".ci",
    "tests",
]
NOT_SOURCES = ["tests/data", "tests/python/fixtures"]
SUFFIXES = {".cpp", ".h", ".cu", ".cuh", ".in", ".py", ".cmake", ".sh", ".yml", ".yaml"}

# A path into docs or lab that starts a word (not an installed ".../share/doc/offloadbench/docs/x.md" or a
# URL); a bare folder name with its slash is prose, not a path.
PATH = re.compile(r"(?<![\w./-])(?:docs|lab)/[\w*<>{}-][\w./*<>{}-]*")
# `<family>`, `{name}`: placeholders, matched as globs.
PLACEHOLDER = re.compile(r"<[^>/]*>|\{[^}/]*\}")

EXPERIMENT = re.compile(r"\b(?:[Mm]easurement|[Ss]ession|[Ss]top) [0-9]+\b")
# A date on its own. One inside a longer token is data, not a reference: a file name (a reference run's
# <gpu>-<date>-quick.json) or an ISO 8601 timestamp (<date>T<time>Z).
DATE = re.compile(r"(?<![\w-])20[0-9]{2}-[01][0-9]-[0-3][0-9](?![\w-])")


def is_source(path):
    relative = path.relative_to(ROOT).as_posix()
    if (
        any(relative == d or relative.startswith(d + "/") for d in NOT_SOURCES)
        or "__pycache__" in relative
    ):
        return False
    if path.name == "CMakeLists.txt" or path.suffix in SUFFIXES:
        return True
    if path.suffix == "" and relative.split("/")[0] in (
        "scripts",
        "ci",
        ".ci",
    ):  # scripts/test, .ci/run
        with path.open("rb") as f:
            return f.read(2) == b"#!"
    return False


def sources():
    found = [ROOT / "CMakeLists.txt"]
    for folder in FOLDERS:
        found += [p for p in sorted((ROOT / folder).rglob("*")) if p.is_file() and is_source(p)]
    return found


def lines(path):
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        yield f"{path.relative_to(ROOT)}:{number}", line


def test_the_scan_sees_the_sources():
    names = {p.relative_to(ROOT).as_posix() for p in sources()}
    assert {
        "kernels/cpu_gemm.h",
        "harness/regression/compare.cpp",
        "tests/CMakeLists.txt",
        "scripts/test",
        ".ci/run",
        "ci/nightly.py",
        "tests/python/test_source_paths.py",
    } <= names
    assert not any(n.startswith(("tests/data/", "docs/", "tests/python/fixtures/")) for n in names)


def exists(reference):
    reference = reference.split("#")[0].rstrip(".,;:)'\"`")
    pattern = PLACEHOLDER.sub("*", reference)
    if any(c in pattern for c in "*?["):
        return any(ROOT.glob(pattern.rstrip("/")))
    return (ROOT / pattern).exists()


def test_every_docs_or_lab_path_a_source_names_exists():
    missing = [
        f"{where}: {ref}"
        for path in sources()
        for where, line in lines(path)
        for ref in PATH.findall(line)
        if not exists(ref)
    ]
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)


def outside_string(line, match):
    """Whether `match` lies outside a "..." string on its line (an even number of quotes before it).
    The one allowance, for dates only: a date in a string is a value or a format example (a stamp, a
    test's input), not a comment dating a result; a comment that shows an example format quotes it.
    An experiment's number is never data, so it is refused anywhere."""
    return line[: match.start()].count('"') % 2 == 0


def test_no_source_cites_an_experiment_or_a_date():
    cited = [
        f"{where}: {m.group()}"
        for path in sources()
        for where, line in lines(path)
        for m in [
            *EXPERIMENT.finditer(line),
            *(d for d in DATE.finditer(line) if outside_string(line, d)),
        ]
    ]
    assert not cited, (
        "say why instead, and point at the record by its file in the lab's records:\n"
        + "\n".join(cited)
    )
