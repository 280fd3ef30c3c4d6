"""offloadbench ab end to end, with fake BASE/NEW programs that behave as `offloadbench run` does (they
write a results file) but with known timings: a slowdown, none, noise, GPU rows with throttled samples."""

import json
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import ROOT, load_json

FAKE = """#!{python}
# A stand-in for offloadbench: `run ... --out FILE -- FLAGS` writes a results file with known times.
import json, math, random, re, sys
FACTORS = {factors}
args = sys.argv[1:]
with open({calls!r}, "a") as log:
    log.write(json.dumps(args) + "\\n")
with open({calls!r}) as log:
    call = len(log.read().splitlines())  # 1, 2, ...: two calls per A/B round
random.seed(call)
out = args[args.index("--out") + 1]
flags = args[args.index("--") + 1:]
pattern = next((f.split("=", 1)[1] for f in flags if f.startswith("--benchmark_filter=")), "")
drift = 1 + 0.2 * math.sin((call - 1) // 2)  # the machine drifts from round to round by up to ±20%
rows = []
for name, (seconds, noise, gpu) in {{"cpu/steady": (1e-3, 0.002, False), "cpu/slowed": (2e-3, 0.002, False),
                                     "cpu/noisy": (1e-3, 0.3, False), "gpu/kernel": (5e-4, 0.002, True)}}.items():
    if pattern and not re.search(pattern, name):
        continue
    for i in range(3):
        row = {{"name": name, "run_type": "iteration", "repetition_index": i, "time_unit": "ns",
               "real_time": 1e9 * seconds * drift * FACTORS.get(name, 1.0) * random.lognormvariate(0, noise),
               "device": 0 if gpu else "cpu"}}
        if gpu:
            row["clocks_locked"] = False
            row["clock_throttled"] = i == 2
            if i == 2:
                row["real_time"] *= 3  # what a throttled sample looks like; it must be dropped
        rows.append(row)
doc = {{"context": {{"offloadbench": {{"schema_version": 1}}, "machine_fingerprint": {{"cpu_model": "fake"}}}},
        "benchmarks": rows}}
with open(out, "w") as f:
    json.dump(doc, f)
"""


def fake(path, calls, factors=None):
    path.write_text(
        FAKE.format(python=sys.executable, factors=repr(factors or {}), calls=str(calls))
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def calls_in(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_ab_finds_a_slowdown_drops_throttled_samples_and_writes_its_outputs(
    run_offloadbench, tmp_path
):
    calls = tmp_path / "calls.txt"
    base = fake(tmp_path / "base", calls)
    new = fake(tmp_path / "new", calls, {"cpu/slowed": 1.10, "gpu/kernel": 1.0})
    out, md = tmp_path / "ab.json", tmp_path / "ab.md"
    done = run_offloadbench(
        "ab",
        base,
        new,
        "--rounds",
        "10",
        "--max-rounds",
        "10",
        "--seed",
        "3",
        "--suite",
        "transfer",
        "--out",
        out,
        "--markdown",
        md,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    result = load_json(out)
    rows = {r["name"]: r for r in result["benchmarks"]}
    assert rows["cpu/slowed"]["verdict"] == "SLOWER"
    assert 0.08 < rows["cpu/slowed"]["change"] < 0.12
    assert (
        rows["cpu/slowed"]["interval_low"]
        < rows["cpu/slowed"]["change"]
        < rows["cpu/slowed"]["interval_high"]
    )
    assert (
        rows["cpu/steady"]["verdict"] == "SAME"
    )  # the ±20% drift between rounds cancels in the pairs
    assert rows["gpu/kernel"]["gpu"] and rows["gpu/kernel"]["delta"] == pytest.approx(0.01)
    assert rows["gpu/kernel"]["verdict"] == "SAME"  # its throttled (3x) samples were dropped
    assert rows["gpu/kernel"]["dropped_throttled"] == 20
    assert result["context"]["same_content"] is False
    assert {r["first"] for r in result["rounds"]} == {"BASE", "NEW"}  # coin flips, not ABAB
    invocations = calls_in(calls)
    assert len(invocations) == 20
    assert all(
        a[0] == "run" and "--benchmark_enable_random_interleaving=true" in a for a in invocations
    )
    assert "throttled" in done.stdout and "not locked" in done.stdout
    text = md.read_text()
    assert "| SLOWER | `cpu/slowed`" in text and "**Note:**" in text


def test_ab_of_identical_programs_says_so_and_gives_inconclusive_ones_extra_rounds(
    run_offloadbench, tmp_path
):
    calls = tmp_path / "calls.txt"
    base = fake(tmp_path / "a", calls)
    (tmp_path / "copy").mkdir()
    new = tmp_path / "copy" / "a"
    new.write_bytes(base.read_bytes())
    new.chmod(base.stat().st_mode)
    out = tmp_path / "aa.json"
    done = run_offloadbench(
        "ab",
        base,
        new,
        "--rounds",
        "6",
        "--max-rounds",
        "9",
        "--extra-batch",
        "3",
        "--seed",
        "1",
        "--out",
        out,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "same content" in done.stdout
    result = load_json(out)
    assert result["context"]["same_content"] is True
    assert result["counts"]["SLOWER"] == result["counts"]["FASTER"] == 0
    rows = {r["name"]: r for r in result["benchmarks"]}
    assert rows["cpu/noisy"]["verdict"] == "INCONCLUSIVE"  # ±30% per process: 9 rounds cannot tell
    assert rows["cpu/noisy"]["rounds"] == 9 and rows["cpu/steady"]["rounds"] == 6
    extra = result["rounds"][6:]
    assert len(extra) == 3 and all(r["benchmarks"] == ["cpu/noisy"] for r in extra)
    assert all("--benchmark_filter=^(cpu/noisy)$" in a for a in calls_in(calls)[12:])


@pytest.mark.parametrize(
    "args, problem",
    [
        (["missing", "NEW"], "BASE 'missing' is not a file"),
        (["BASE", "NEW", "--rounds", "0"], "--rounds"),
        (["BASE", "NEW", "--max-rounds", "3"], "--max-rounds"),
        (["BASE", "NEW", "--delta-cpu", "0"], "--delta-cpu"),
        (["BASE", "NEW", "--", "--benchmark_repetitions=9"], "--benchmark_repetitions"),
        (["BASE", "NOT_EXECUTABLE"], "is not executable"),
    ],
)
def test_ab_bad_input_is_one_line_and_exit_2(run_offloadbench, tmp_path, args, problem):
    calls = tmp_path / "calls.txt"
    paths = {
        "BASE": str(fake(tmp_path / "base", calls)),
        "NEW": str(fake(tmp_path / "new", calls)),
        "NOT_EXECUTABLE": str(tmp_path / "plain"),
    }
    (tmp_path / "plain").write_text("")
    done = run_offloadbench("ab", *[paths.get(a, a) for a in args], "--out", tmp_path / "ab.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert problem in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not calls.exists()  # nothing was run
    assert not (tmp_path / "ab.json").exists()


def test_a_malformed_injected_slowdown_is_bad_input_before_anything_runs(
    run_offloadbench, tmp_path
):
    out = tmp_path / "r.json"
    env = dict(os.environ, OFFLOADBENCH_INJECT_SLOWDOWN="triad=five")
    done = run_offloadbench("run", "--suite", "compute", "--device", "cpu", "--out", out, env=env)
    assert done.returncode == 2
    assert "OFFLOADBENCH_INJECT_SLOWDOWN" in done.stderr and done.stderr.count("\n") == 1, (
        done.stderr
    )
    assert not out.exists()


def one_line_exit_2(done):
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr


# Issue 38, 1. ab ran its rounds in $TMPDIR/offloadbench-ab-<pid>, reused when it existed, and opened
# the logs there with O_TRUNC: links planted by another user made a root ab overwrite what they name.
PLANT = 'd="$TMPDIR/offloadbench-ab-$1" && mkdir -p "$d" && for s in base new; do ln -s "$2" "$d/round001-$s.log"; done'


@pytest.mark.parametrize("attacker", ["same user", "another user"])
def test_links_planted_where_ab_used_to_run_its_rounds_are_never_followed(
    offloadbench_bin, tmp_path, attacker
):
    runas, tmpdir = "", tmp_path / "tmp"
    if attacker == "another user":
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            pytest.skip("planting as another user needs root and setpriv")
        runas = "setpriv --reuid=65534 --regid=65534 --clear-groups"
        tmpdir = pathlib.Path(
            tempfile.mkdtemp(prefix="ob-ab-tmp-")
        )  # outside tmp_path, which is root's only
        tmpdir.chmod(0o1777)  # as /tmp is
    else:
        tmpdir.mkdir()
    try:
        victim = tmp_path / "victim"
        victim.write_text("precious")
        calls = tmp_path / "calls.txt"
        out = tmp_path / "ab.json"
        # The attacker plants for ab's pid: this shell's, which exec keeps.
        script = f'p=$1; v=$2; shift 2; {runas} sh -c "$p" plant $$ "$v" || exit 99; exec "$@"'
        done = subprocess.run(
            [
                "sh",
                "-c",
                script,
                "sh",
                PLANT,
                str(victim),
                offloadbench_bin,
                "ab",
                str(fake(tmp_path / "base", calls)),
                str(fake(tmp_path / "new", calls)),
                "--rounds",
                "2",
                "--max-rounds",
                "2",
                "--seed",
                "1",
                "--out",
                str(out),
            ],
            env=dict(os.environ, TMPDIR=str(tmpdir)),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode in (0, 1), done.stdout + done.stderr
        assert victim.read_text() == "precious"
        assert len(calls_in(calls)) == 4 and out.exists()
        (planted,) = tmpdir.iterdir()  # ab's own folder is gone; the planted one was left alone
        assert all(link.is_symlink() for link in planted.iterdir())
    finally:
        if attacker == "another user":
            shutil.rmtree(tmpdir)


def test_keep_runs_must_be_a_new_or_empty_folder(run_offloadbench, tmp_path):
    calls, victim, kept = tmp_path / "calls.txt", tmp_path / "victim", tmp_path / "kept"
    victim.write_text("precious")
    kept.mkdir()
    (kept / "round001-base.log").symlink_to(victim)
    done = run_offloadbench(
        "ab",
        fake(tmp_path / "base", calls),
        fake(tmp_path / "new", calls),
        "--rounds",
        "2",
        "--keep-runs",
        kept,
        "--out",
        tmp_path / "ab.json",
    )
    assert "--keep-runs" in one_line_exit_2(done) and "is not empty" in done.stderr
    assert not calls.exists() and victim.read_text() == "precious"


# Issue 38, 2. `--out BASE` replaced the program under test by the results; `--out X --markdown X` lost one.
@pytest.mark.parametrize(
    "outputs, problem",
    [
        (["--out", "base"], "--out 'base' is the same file as BASE"),
        (["--out", "hard-link-to-base"], "is the same file as BASE"),
        (["--out", "ab.json", "--markdown", "new"], "--markdown 'new' is the same file as NEW"),
        (["--out", "x", "--markdown", "x"], "--markdown 'x' is the same file as --out 'x'"),
        (["--out", "x", "--markdown", "./x"], "--markdown './x' is the same file as --out 'x'"),
    ],
)
def test_ab_outputs_that_are_inputs_or_each_other_are_refused(
    run_offloadbench, tmp_path, outputs, problem
):
    calls = tmp_path / "calls.txt"
    fake(tmp_path / "base", calls)
    fake(tmp_path / "new", calls)
    os.link(tmp_path / "base", tmp_path / "hard-link-to-base")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    done = run_offloadbench("ab", "base", "new", "--rounds", "2", *outputs, cwd=tmp_path)
    assert problem in one_line_exit_2(done)
    assert not calls.exists()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# Issue 38, 3. --markdown went through a truncating stream (a full disk lost the old summary); it is now
# a new file renamed over the old one, which is never written into.
def test_ab_markdown_is_replaced_whole_never_written_in_place(run_offloadbench, tmp_path):
    calls, md = tmp_path / "calls.txt", tmp_path / "ab.md"
    md.write_text("the old summary")
    os.link(md, tmp_path / "old.md")  # a second name for the old file's inode
    done = run_offloadbench(
        "ab",
        fake(tmp_path / "base", calls),
        fake(tmp_path / "new", calls),
        "--rounds",
        "2",
        "--max-rounds",
        "2",
        "--out",
        tmp_path / "ab.json",
        "--markdown",
        md,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "| " in md.read_text()
    assert (tmp_path / "old.md").read_text() == "the old summary"


# Issue 38, 5. Without --out, ab ran every round and only then found it could not write ab-<time>.json.
def test_ab_in_a_read_only_folder_stops_before_round_1(offloadbench_bin, tmp_path):
    calls, folder = tmp_path / "calls.txt", tmp_path / "read-only"
    folder.mkdir()
    command = [
        offloadbench_bin,
        "ab",
        str(fake(tmp_path / "base", calls)),
        str(fake(tmp_path / "new", calls)),
        "--rounds",
        "2",
        "--max-rounds",
        "2",
    ]
    if os.geteuid() == 0:  # root writes through permissions: a read-only mount of the process's own
        probe = (
            subprocess.run(
                ["unshare", "-m", "mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(folder)],
                capture_output=True,
            )
            if shutil.which("unshare")
            else None
        )
        if not probe or probe.returncode != 0:
            pytest.skip("as root, a read-only folder needs a private read-only mount (unshare -m)")
        command = [
            "unshare",
            "-m",
            "sh",
            "-c",
            'mount -t tmpfs -o ro tmpfs "$0" && cd "$0" && exec "$@"',
            str(folder),
            *command,
        ]
    else:
        folder.chmod(0o555)
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120)
    line = one_line_exit_2(done)
    assert "--out 'ab-" in line and "cannot write there" in line
    assert not calls.exists(), "no round ran"


# Reliability issue, items 8 and 10: BASE or NEW that hangs, ignores SIGTERM or fails; ab stopped by a
# signal. Each time: exit 1 (a process failed) or 130/143 (interrupted), one line that says so, no
# process left running, and no temporary folder left in $TMPDIR.
WRITES_RESULTS = (
    '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --out ] && cp "{results}" "$2"; shift; done\n'
)
HANGS = '#!/bin/sh\nsleep 1000 &\necho $$ $! >> "{pids}"\nwait\n'  # a shell and its own child
IGNORES_SIGTERM = "#!/bin/sh\ntrap '' TERM INT\n" + HANGS.split("\n", 1)[1]
FAILS = '#!/bin/sh\necho $$ >> "{pids}"\necho "no GPU here, giving up" >&2\nexit {status}\n'


def script(path, text, **fields):
    path.write_text(text.format(**fields))
    path.chmod(0o755)
    return path


def alive(pid):
    """True while `pid` runs (a zombie that nobody reaps counts as gone)."""
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def pids_in(path, timeout=30):
    """The pids the fake programs wrote, once one has."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if lines:
            return [int(p) for line in lines for p in line.split()]
        time.sleep(0.02)
    raise AssertionError(f"no process wrote its pid to {path}")


def assert_all_gone(pids):
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if alive(p)]
    for p in left:  # nothing of ours may outlive a failing test
        os.kill(p, signal.SIGKILL)
    assert not left, "a process was left running"


def error_line(stderr):
    """ab's one line about what went wrong: everything but its progress lines ("ab: round 1 …")."""
    lines = [line for line in stderr.splitlines() if not line.startswith("ab: round ")]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture
def hostile(tmp_path, offloadbench_bin):
    """ab with a good BASE (quick to start, as the time limits are short) and a hostile NEW, in an empty $TMPDIR of its own: (start, pid file, tmpdir)."""
    tmpdir, pids = tmp_path / "tmp", tmp_path / "pids"
    tmpdir.mkdir()
    base = script(
        tmp_path / "base", WRITES_RESULTS, results=ROOT / "tests" / "data" / "quick_cpu_reps10.json"
    )

    def start(new_text, *options, **fields):
        new = script(tmp_path / "new", new_text, pids=pids, **fields)
        command = [
            offloadbench_bin,
            "ab",
            str(base),
            str(new),
            "--rounds",
            "1",
            "--max-rounds",
            "1",
            "--out",
            str(tmp_path / "ab.json"),
            *options,
        ]
        return subprocess.Popen(
            command,
            env=dict(os.environ, TMPDIR=str(tmpdir)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    yield start, pids, tmpdir
    if pids.exists():
        assert_all_gone(pids_in(pids))


def finish(proc, timeout=60):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"ab did not end within {timeout} s")
    return proc.returncode, err


@pytest.mark.parametrize("program", [HANGS, IGNORES_SIGTERM], ids=["hangs", "ignores-sigterm"])
def test_a_process_that_never_ends_is_stopped_at_its_time_limit(hostile, program):
    start, pids, tmpdir = hostile
    began = time.monotonic()
    code, err = finish(start(program, "--process-timeout", "2"))
    line = error_line(err)
    assert code == 1, err
    assert "NEW (" in line and "did not finish within 2 s in round 1; stopped it" in line, line
    assert time.monotonic() - began < 20  # 2 s, and 2 s of grace for the one that ignores SIGTERM
    assert_all_gone(pids_in(pids))
    assert not list(tmpdir.iterdir()), "the temporary folder was left"


@pytest.mark.parametrize(
    "status, problem",
    [(1, "wrote no results (status 1) in round 1"), (3, "exited with status 3 in round 1")],
)
def test_a_process_that_fails_is_exit_1_on_one_line(hostile, status, problem):
    start, pids, tmpdir = hostile
    code, err = finish(start(FAILS, status=status))
    line = error_line(err)
    assert code == 1, err
    assert (
        "NEW (" in line and problem in line and 'its log ended: "no GPU here, giving up"' in line
    ), line
    assert not list(tmpdir.iterdir()), "the temporary folder was left"


def test_keep_runs_keeps_the_log_of_a_process_that_failed(hostile, tmp_path):
    start, pids, tmpdir = hostile
    code, err = finish(start(FAILS, "--keep-runs", str(tmp_path / "kept"), status=1))
    assert code == 1, err
    assert f"its log: {tmp_path / 'kept' / 'round001-new.log'}" in error_line(err)
    assert "no GPU here" in (tmp_path / "kept" / "round001-new.log").read_text()


# SIGINT as a terminal's Ctrl-C sends it (to ab's whole process group), SIGTERM as kill(1) does (to ab).
@pytest.mark.parametrize(
    "sig, code, program",
    [
        (signal.SIGINT, 130, HANGS),
        (signal.SIGTERM, 143, HANGS),
        (signal.SIGTERM, 143, IGNORES_SIGTERM),
    ],
    ids=["ctrl-c", "sigterm", "sigterm-child-ignores-it"],
)
def test_an_interrupted_ab_stops_its_processes_and_cleans_up(hostile, sig, code, program):
    start, pids, tmpdir = hostile
    proc = start(program)
    pids_in(pids)  # NEW is running
    (os.killpg if sig == signal.SIGINT else os.kill)(proc.pid, sig)
    got, err = finish(proc, timeout=30)
    assert got == code, err
    assert error_line(err).startswith(f"offloadbench: interrupted ({sig.name}) in round 1"), err
    assert_all_gone(pids_in(pids))
    assert not list(tmpdir.iterdir()), "the temporary folder was left"


def test_an_ab_killed_outright_takes_its_process_with_it(hostile):
    start, pids, tmpdir = hostile
    proc = start('#!/bin/sh\necho $$ >> "{pids}"\nexec sleep 1000\n')
    (child,) = pids_in(pids)
    proc.kill()  # SIGKILL: ab can clean up nothing, but its process must not run on alone
    finish(proc)
    assert_all_gone([child])
