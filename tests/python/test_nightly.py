"""ci/nightly.py for real: three nights end to end against a bare local repository as the results remote,
on two CPU cases, with the regression self-test's injected slowdown standing in for a bad commit; then a
second machine in the same tree. And `plan` on the committed H100 file."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

NIGHTLY = ROOT / "ci" / "nightly.py"
VICTIM = "transfer/host_memcpy/pretouched/threads:1/1MiB"
CASES = "transfer/host_memcpy/pretouched/threads:1/(1MiB|16MiB)/"

# A "build" of a commit: a wrapper around the built program. A commit holding slow.txt is the bad one:
# its `run`s (the processes that measure) get the injected slowdown that file names.
BUILD = r"""set -e
inj=$(git show "$SHA:slow.txt" 2>/dev/null || true)
cat > "$OUT" <<EOF
#!/bin/sh
if [ "\$1" = run ] && [ -n "$inj" ]; then OFFLOADBENCH_INJECT_SLOWDOWN="$inj"; export OFFLOADBENCH_INJECT_SLOWDOWN; fi
exec "$OFFLOADBENCH_BIN" "\$@"
EOF
chmod +x "$OUT"
"""


def git(*args, cwd):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture(scope="module")
def nights(tmp_path_factory, offloadbench_bin):
    root = tmp_path_factory.mktemp("nights")
    remote = root / "results.git"
    git("init", "-q", "--bare", str(remote), cwd=root)
    source = root / "project"
    source.mkdir()
    git("init", "-q", cwd=source)
    shas = []
    # 30%: far above the run-to-run noise of a busy machine, so both nights that measure it see it.
    for i, slow in enumerate([None, None, f"{VICTIM}=30"]):
        (source / "version.txt").write_text(f"{i}\n")
        if slow:
            (source / "slow.txt").write_text(slow)
        git("add", "-A", cwd=source)
        git("commit", "-qm", f"commit {i}", cwd=source)
        shas.append(git("rev-parse", "HEAD", cwd=source))
    env = dict(
        os.environ,
        OFFLOADBENCH_BIN=offloadbench_bin,
        GITHUB_STEP_SUMMARY="",
        OFFLOADBENCH_REMEASURE_UNSTEADY="0",
    )

    def night(candidate, *extra, machine=None, work=None):
        work = work or root / f"work-{len(list(root.glob('work-*')))}"
        argv = [
            sys.executable,
            str(NIGHTLY),
            "night",
            "--results-remote",
            str(remote),
            "--source",
            str(source),
            "--candidate",
            candidate,
            "--device",
            "cpu",
            "--suite",
            "transfer",
            "--filter",
            CASES,
            "--repetitions",
            "5",
            "--rounds",
            "8",
            "--max-rounds",
            "16",
            "--build",
            BUILD,
            "--work",
            str(work),
            *extra,
        ]
        if machine:
            argv += ["--machine", machine]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
        return done, work

    def branch_file(path):
        done = subprocess.run(
            ["git", "--git-dir", str(remote), "show", f"benchmark-results:{path}"],
            capture_output=True,
            text=True,
        )
        return done.stdout if done.returncode == 0 else None

    def branch_files(folder):
        out = subprocess.run(
            [
                "git",
                "--git-dir",
                str(remote),
                "ls-tree",
                "-r",
                "--name-only",
                "benchmark-results",
                folder,
            ],
            capture_output=True,
            text=True,
        ).stdout.split()
        return out

    first = night(shas[1])
    machine = json.loads(
        subprocess.run([offloadbench_bin, "info", "--json"], capture_output=True, text=True).stdout
    )["machine_fingerprint"]["id"]
    after_first = branch_file(f"baselines/{machine}.sha")
    second = night(shas[2])
    after_second = branch_file(f"baselines/{machine}.sha")
    histories_after_second = branch_files(f"history/{machine}")
    third = night(shas[2], "--accept")
    after_third = branch_file(f"baselines/{machine}.sha")
    # The second machine's runner kept a night that was stopped in its run (its file says incomplete).
    leftover = root / "work-other"
    leftover.mkdir()
    cut = json.loads((first[1] / "run.json").read_text())
    cut["context"]["offloadbench"]["incomplete"] = True
    (leftover / "new.json").write_text(json.dumps(cut))
    other = night(
        shas[2], "--base", shas[2], machine="second-machine", work=leftover
    )  # its first night: A/A
    return dict(
        shas=shas,
        machine=machine,
        first=first,
        second=second,
        third=third,
        other=other,
        after_first=after_first,
        after_second=after_second,
        after_third=after_third,
        histories_after_second=histories_after_second,
        branch_files=branch_files,
        root=root,
    )


def test_night_one_is_green_and_records_everything(nights):
    done, work = nights["first"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert nights["after_first"].strip() == nights["shas"][1]  # the base points at the candidate
    assert (work / "dashboard" / "index.html").is_file()
    summary = (work / "summary.md").read_text()
    assert "**green**" in summary and "first night here" in summary, summary


def test_night_two_is_slower_names_the_case_and_keeps_the_base_and_the_history(nights):
    done, work = nights["second"]
    assert done.returncode == 1, done.stderr[-3000:]
    summary = (work / "summary.md").read_text()
    assert "**SLOWER**" in summary, summary
    assert VICTIM in summary, summary
    ab = json.loads((work / "ab.json").read_text())
    slower = [r["name"] for r in ab["benchmarks"] if r.get("verdict") == "SLOWER"]
    # The control row may rarely be a false alarm (ab's family-wise alpha is 5%): the victim must be caught.
    assert VICTIM + "/real_time" in slower, ab["benchmarks"]
    assert nights["after_second"].strip() == nights["shas"][1]  # the base stays
    assert (
        len(nights["histories_after_second"]) == 2
    )  # the failing night is in the history all the same


def test_night_three_accepted_moves_the_base(nights):
    done, work = nights["third"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "**accepted**" in (work / "summary.md").read_text()
    assert nights["after_third"].strip() == nights["shas"][2]


def test_a_second_machine_in_the_same_tree(nights, offloadbench_bin):
    done, work = nights["other"]
    assert done.returncode == 0, done.stderr[-3000:]
    machines = {p.split("/")[1] for p in nights["branch_files"]("history")}
    assert machines == {nights["machine"], "second-machine"}, machines
    # A night cut short keeps what it measured, says so, and the next night goes on.
    assert any(
        p.endswith("-cut-short.json") for p in nights["branch_files"]("history/second-machine")
    )
    assert "cut short" in (work / "summary.md").read_text()
    index = (work / "dashboard" / "index.html").read_text()
    results = work / "results"
    history = subprocess.run(
        [offloadbench_bin, "history", str(results / "history"), "--all"],
        capture_output=True,
        text=True,
    )
    assert history.returncode == 0, history.stderr
    for name in (nights["machine"], "second-machine"):
        assert name in history.stdout, history.stdout
    assert index.count("<a ") >= 2


def test_plan_of_a_night_on_the_committed_h100_file():
    reference = ROOT / "results/reference/nvidia-h100-80gb-hbm3-2026-11-26-quick.json"
    one = subprocess.run(
        [sys.executable, str(NIGHTLY), "plan", str(reference)], capture_output=True, text=True
    )
    eight = subprocess.run(
        [sys.executable, str(NIGHTLY), "plan", str(reference), "--gpus", "8"],
        capture_output=True,
        text=True,
    )
    assert one.returncode == 0 and eight.returncode == 0, one.stderr + eight.stderr
    minutes = lambda out: int(next(l for l in out.splitlines() if "**night**" in l).split("**")[3])
    assert minutes(one.stdout) <= 120, one.stdout
    assert minutes(eight.stdout) <= 240, eight.stdout
    assert minutes(eight.stdout) > minutes(one.stdout)
    assert "peer 56 pairs" in eight.stdout
    workflow = (ROOT / "ci" / "nightly-gpu.yml").read_text()
    limit = int(
        next(l for l in eight.stdout.splitlines() if l.startswith("timeout-minutes:")).split()[1]
    )
    assert f"timeout-minutes: {limit}" in workflow, "the workflow's limit follows the 8-GPU plan"


def test_plan_refuses_bad_input(tmp_path):
    done = subprocess.run(
        [sys.executable, str(NIGHTLY), "plan", str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "error" in done.stderr
