"""The lab (lab/README.md): every experiment program is built by lab/microbench/CMakeLists.txt, which
configures and builds on its own, and the lab's README names each tool and program it holds."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

MICROBENCH = ROOT / "lab" / "microbench"
CALL = re.compile(r"^microbench\((\w+)(?:\s+SOURCE\s+(\S+))?", re.MULTILINE)


def programs():
    """{target: source} for every microbench(...) call in the CMakeLists.txt."""
    text = (MICROBENCH / "CMakeLists.txt").read_text()
    return {name: source or f"{name}.cpp" for name, source in CALL.findall(text)}


def test_every_program_in_lab_microbench_is_built_by_its_cmakelists():
    sources = sorted(p.name for p in MICROBENCH.glob("*.cpp"))
    assert len(sources) >= 9
    listed = set(programs().values())
    assert sorted(listed) == sources, (
        "lab/microbench/CMakeLists.txt and the .cpp files beside it differ"
    )


def test_every_program_says_what_it_answers_and_where_it_is_built():
    for path in sorted(MICROBENCH.glob("*.cpp")):
        lines = path.read_text().splitlines()
        comment = " ".join(
            line[3:]
            for line in lines[: next(i for i, l in enumerate(lines) if not l.startswith("// "))]
        )
        question, _, built = comment.partition("?")
        assert question and built, f"{path.name}: {comment!r} asks no question"
        assert built.strip() == "Built by lab/microbench/CMakeLists.txt.", path.name


def test_the_lab_readme_names_every_tool_and_program():
    readme = (ROOT / "lab" / "README.md").read_text()
    tools = [p.name for p in (ROOT / "lab" / "tools").iterdir() if p.is_file()]
    missing = [
        name for name in tools + [p.name for p in MICROBENCH.glob("*.cpp")] if name not in readme
    ]
    assert not missing, f"lab/README.md does not name {missing}"


@pytest.mark.skipif(
    not shutil.which("cmake") or not shutil.which("ninja"), reason="needs cmake and ninja"
)
def test_lab_microbench_configures_and_builds_each_program_or_says_why_not(tmp_path):
    """Cold, this takes about 20 s of CPU on two cores (the product's CPU kernels are built too)."""
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    configure = subprocess.run(
        ["cmake", "-S", MICROBENCH, "-B", tmp_path, "-G", "Ninja", *launcher],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    built, skipped = [], []
    for name in programs():
        if re.search(rf"^-- microbench: {name}$", configure.stdout, re.MULTILINE):
            built.append(name)
        elif re.search(
            rf"^-- microbench: {name} skipped: \S+ not found$", configure.stdout, re.MULTILINE
        ):
            skipped.append(name)
    assert sorted(built + skipped) == sorted(programs()), configure.stdout
    assert "adamw_pass" in built  # needs nothing but the compiler
    build = subprocess.run(
        ["ninja", "-C", tmp_path, "-j2"], capture_output=True, text=True, timeout=600
    )
    assert build.returncode == 0, build.stdout[-4000:]
    for name in built:
        assert os.access(tmp_path / name, os.X_OK), f"{name} was configured but not built"
    for name in skipped:
        assert not (tmp_path / name).exists()
