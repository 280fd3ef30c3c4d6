"""README is what a newcomer reads first: its commands run as shown, its sample is what the program
prints, its links lead somewhere, and the first screen answers what, what you get, and how."""

import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

README = ROOT / "README.md"
PROGRAM = (
    "build/release/offloadbench"  # where scripts/bench leaves it; the tests run the test build
)


def readme():
    return README.read_text(encoding="utf-8")


def fenced_blocks(text, language):
    """The bodies of the fenced blocks whose opening fence names `language` ("" for none)."""
    blocks, body, opened_as = [], None, None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if body is None:
                body, opened_as = [], line[3:].strip()
            else:
                if opened_as == language:
                    blocks.append("".join(body))
                body = None
        elif body is not None:
            body.append(line)
    return blocks


def shown_commands():
    """Every command in README's sh blocks, its comment removed."""
    commands = []
    for block in fenced_blocks(readme(), "sh"):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip()
            if command:
                commands.append(command)
    return commands


def test_every_command_shown_is_one_these_tests_run():
    commands = shown_commands()
    assert commands, "README shows no command"
    for command in commands:
        assert command in ("scripts/bench", "scripts/test") or command.startswith(PROGRAM + " "), (
            command
        )


def test_the_first_screen_says_what_it_answers_and_how_to_run_it():
    lines = readme().splitlines()
    first_screen = "\n".join(lines[:30])
    assert "When does moving this work to the GPU pay off" in first_screen
    assert "scripts/bench" in first_screen and "scripts/test" in first_screen
    assert "results/<host>-<UTC time>.json" in first_screen, "where the results go"
    chart = re.search(r"!\[[^\]]+\]\(([^)]+\.png)\)", readme())
    assert chart and lines.index(next(l for l in lines if chart.group(0) in l)) < 45, (
        "one chart, early"
    )
    assert (ROOT / chart.group(1)).stat().st_size > 0


def test_the_program_commands_run_as_shown(offloadbench_bin, tmp_path):
    """The CPU run, its summary and its charts, in the order README gives them, in an empty folder."""
    env = dict(
        os.environ,
        OFFLOADBENCH_PYTHON=os.environ.get("OFFLOADBENCH_PYTHON", str(ROOT / ".venv/bin/python")),
    )
    for command in shown_commands():
        if not command.startswith(PROGRAM):
            continue
        argv = [offloadbench_bin, *shlex.split(command)[1:]]
        done = subprocess.run(
            argv, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env
        )
        assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stderr[-2000:]}"
    assert (tmp_path / "cpu.json").stat().st_size > 0
    assert (tmp_path / "cpu-plots" / "report.html").stat().st_size > 0


def test_the_first_screen_of_the_h100_quick_run_fits_a_screen(run_offloadbench):
    """summary's default output: at most 40 lines of at most 100 characters, verdicts first."""
    reference = ROOT / "results/reference/nvidia-h100-80gb-hbm3-2026-11-26-quick.json"
    printed = run_offloadbench("summary", reference)
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert len(lines) <= 40, printed.stdout
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert lines[0].startswith("offloadbench: ")
    assert any(
        re.match(r"GPU 0 NVIDIA H100 80GB HBM3, PCIe Gen5 x16: \d+ healthy", line) for line in lines
    ), lines
    assert lines[-1].startswith("every table and finding: offloadbench summary --all")
    everything = run_offloadbench("summary", reference, "--all").stdout
    uncut = [
        line for line in lines[:-1] if not line.endswith("…") and not line.startswith("  ... and ")
    ]
    assert uncut and all(line in everything.splitlines() for line in uncut), (
        "--all prints the first screen too"
    )
    assert "findings:" in everything and len(everything.splitlines()) > 40


def test_the_sample_summary_is_what_summary_prints(run_offloadbench):
    reference = ROOT / "results/reference/nvidia-h100-80gb-hbm3-2026-11-26-quick.json"
    assert str(reference.relative_to(ROOT)) in readme(), "the sample names the file it comes from"
    sample = next(b for b in fenced_blocks(readme(), "") if b.startswith("offloadbench: "))
    printed = run_offloadbench("summary", reference)
    assert printed.returncode == 0, printed.stderr
    for line in sample.splitlines():
        assert line in printed.stdout.splitlines(), (
            f"README's sample line is not what summary prints: {line!r}"
        )


def test_every_link_in_readme_and_docs_leads_to_a_file():
    pages = [
        README,
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "results/reference/README.md",
        *sorted((ROOT / "lab").glob("*.md")),
    ]
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+://", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            assert path.exists(), (
                f"{page.relative_to(ROOT)} links to {target}, which does not exist"
            )


def test_scripts_test_is_what_ci_runs():
    ci = (ROOT / ".ci/run").read_text()
    assert re.search(r"^exec scripts/test$", ci, flags=re.M), (
        ".ci/run must run README's test command"
    )


def test_scripts_bench_writes_the_results_and_the_report(offloadbench_bin, tmp_path):
    """README's main command, as a user runs it, cut to one small CPU case: scripts/bench and scripts/setup
    in a copy of the tree whose cmake only records what it is asked and whose build/release/offloadbench is
    the test build, so that the script's own work (the preset it builds, --out, the run, the charts, the
    report line) is tested without a second full build. test_the_release_build_runs_the_quick_start builds
    the Release preset for real."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    for script in ("bench", "setup"):
        shutil.copy2(ROOT / "scripts" / script, tree / "scripts" / script)
    (tree / ".venv").symlink_to(
        sys.prefix
    )  # the venv these tests run in, so that setup installs nothing
    (tree / PROGRAM).parent.mkdir(parents=True)
    (tree / PROGRAM).symlink_to(offloadbench_bin)
    shims, calls = tmp_path / "bin", tmp_path / "cmake-calls"
    shims.mkdir()
    (shims / "cmake").write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\n')
    (shims / "cmake").chmod(0o755)
    out = tmp_path / "bench.json"
    env = dict(os.environ, PATH=f"{shims}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [
            tree / "scripts/bench",
            "--suite",
            "compute",
            "--device",
            "cpu",
            "--sizes",
            "1Mi",
            "--repetitions",
            "1",
            "--out",
            str(out),
            "--",
            "--benchmark_filter=triad",
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    asked = calls.read_text().splitlines()
    assert any(c.startswith("--preset release ") for c in asked), asked
    assert "--build --preset release" in asked, asked
    assert out.stat().st_size > 0
    report = tmp_path / "bench-plots" / "report.html"
    assert report.stat().st_size > 0
    printed = re.findall(r"^report: (.+)$", done.stdout, flags=re.M)
    assert printed and pathlib.Path(printed[-1]) == report, done.stdout[-2000:]


def test_the_release_preset_builds_what_readme_runs():
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    release = next(p for p in presets["configurePresets"] if p["name"] == "release")
    assert release["binaryDir"] == "${sourceDir}/" + str(pathlib.Path(PROGRAM).parent)
    assert any(
        p["name"] == "release" and p["configurePreset"] == "release"
        for p in presets["buildPresets"]
    )


@pytest.mark.skipif(
    os.environ.get("OFFLOADBENCH_TEST_BENCH") != "1",
    reason="builds the Release preset, a second full build: runs with OFFLOADBENCH_TEST_BENCH=1",
)
def test_the_release_build_runs_the_quick_start(tmp_path):
    """scripts/bench as it is, Release build included."""
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [
            "scripts/bench",
            "--suite",
            "compute",
            "--device",
            "cpu",
            "--sizes",
            "1Mi",
            "--repetitions",
            "1",
            "--out",
            str(out),
            "--",
            "--benchmark_filter=triad",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3000,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "bench-plots" / "report.html").stat().st_size > 0
