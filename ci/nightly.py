#!/usr/bin/env python3
"""One night of regression tracking, as ci/nightly-gpu.yml runs it on a GPU runner and as anyone can run
it on a laptop (--device cpu) against any git remote.

  ci/nightly.py night --results-remote URL [--source .] [--candidate SHA] [--base SHA] [--accept]
                      [--device all|cpu|N] [--suite all] [--filter REGEX] [--repetitions 10]
                      [--rounds 20] [--max-rounds 40] [--build CMD] [--work nightly] [--summary FILE]
  ci/nightly.py plan RESULTS.json [--gpus 1] [--repetitions 10] [--rounds 20] [--max-rounds 40]
                      [--probes 40] [--build-minutes M]

A night: build the candidate; one run of the suite for the history (RESULTS_BRANCH's
history/<machine>/<UTC>-<sha>.json, kept whatever the verdict, marked incomplete when cut short);
triage of that file against the machine's previous night (`offloadbench compare`); then `offloadbench
ab` between the base (the last good commit on this machine) and the candidate on only the rows triage
saw move or could not tell, plus the headline rows (the ones `summary` reports). So the night's cost
grows with what moved, not with the suite × rounds. Green (or --accept): the candidate becomes the
base. The dashboard of every machine's history is built, and the job summary text written.

--build CMD builds a commit: run with $SHA (the commit) and $OUT (where the executable must end up) in
its environment, from --source. Default: a git worktree of the commit, scripts/setup and the release
preset (build/release/offloadbench). Exit: 0 green or accepted, 1 SLOWER / invalid rows / a failed
step (what finished is in the history), 2 bad input.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# A worktree per role (candidate, base) beside $OUT, kept between nights: its .venv and build folder
# make the next night's build incremental.
DEFAULT_BUILD = (
    "set -e; git worktree prune; "
    'if [ -d "$OUT.src/.git" ] || [ -f "$OUT.src/.git" ]; then git -C "$OUT.src" checkout -q --detach --force "$SHA"; '
    'else rm -rf "$OUT.src"; git worktree add -q --detach --force "$OUT.src" "$SHA"; fi; '
    'cd "$OUT.src"; source scripts/setup >/dev/null; "$OB_CMAKE" --preset release "${OB_CMAKE_ARGS[@]}" >/dev/null; '
    '"$OB_CMAKE" --build --preset release; cp build/release/offloadbench "$OUT"'
)
IDENTITY = ["-c", "user.name=offloadbench nightly", "-c", "user.email=nightly@localhost"]


class NightError(Exception):
    """A step failed: the night stops, what finished is kept."""


def log(text):
    print(f"nightly: {text}", file=sys.stderr, flush=True)


def run(argv, cwd=None, check=True, env=None, capture=False):
    done = subprocess.run(argv, cwd=cwd, env=env, text=True, capture_output=capture)
    if check and done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] if capture else []
        raise NightError(
            f"{' '.join(map(str, argv[:3]))} ... exited {done.returncode}{': ' + tail[0] if tail else ''}"
        )
    return done


def git(*args, cwd, check=True):
    return run(["git", *args], cwd=cwd, check=check, capture=True)


def stamp():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def build(args, sha, out):
    env = dict(os.environ, SHA=sha, OUT=os.path.abspath(out))
    log(f"building {sha[:12]}")
    run(["bash", "-c", args.build or DEFAULT_BUILD], cwd=args.source, env=env)
    if not os.access(out, os.X_OK):
        raise NightError(f"the build of {sha[:12]} left no executable at {out}")
    return os.path.abspath(out)


def fingerprint_id(binary):
    info = json.loads(run([binary, "info", "--json"], capture=True).stdout)
    return info["machine_fingerprint"]["id"]


def checkout_results(args, work):
    """The results branch in work/results: cloned from the remote, or started when it has none."""
    path = os.path.join(work, "results")
    shutil.rmtree(path, ignore_errors=True)
    if (
        git(
            "clone",
            "-q",
            "--depth",
            "50",
            "--branch",
            args.results_branch,
            args.results_remote,
            path,
            cwd=work,
            check=False,
        ).returncode
        != 0
    ):
        shutil.rmtree(path, ignore_errors=True)
        git("init", "-q", path, cwd=work)
        git("checkout", "-q", "--orphan", args.results_branch, cwd=path)
        git("remote", "add", "origin", args.results_remote, cwd=path)
    return path


def push(results, message):
    git("add", "-A", cwd=results)
    if git("diff", "--cached", "--quiet", cwd=results, check=False).returncode == 0:
        return
    git(*IDENTITY, "commit", "-qm", message, cwd=results)
    git("push", "-q", "origin", f"HEAD:refs/heads/{current_branch(results)}", cwd=results)


def current_branch(repo):
    return git("symbolic-ref", "--short", "HEAD", cwd=repo).stdout.strip()


def suite_args(args):
    flags = ["--suite", args.suite, "--device", args.device]
    return flags


def filter_flags(pattern):
    return ["--", f"--benchmark_filter={pattern}"] if pattern else []


def exact_filter(names):
    return "^(" + "|".join(re.escape(n) for n in sorted(names)) + ")$"


def ab_rows(triage, new_doc, probes):
    """The rows ab re-measures: every row triage did not call SAME, and up to `probes` headline rows."""
    moved = [r["name"] for r in (triage or {}).get("rows", []) if r.get("verdict") != "SAME"]
    headlines = sorted(
        {
            r["name"]
            for r in new_doc.get("benchmarks", [])
            if r.get("run_type") == "iteration" and "headline" in r and not r.get("skipped")
        }
    )
    return sorted(set(moved) | set(headlines[:probes])), len(moved)


def previous_night(history_dir, tonight):
    files = sorted(
        f for f in os.listdir(history_dir) if f.endswith(".json") and f != os.path.basename(tonight)
    )
    return os.path.join(history_dir, files[-1]) if files else None


def night(args):
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    leftover = os.path.join(work, "new.json")  # a night cut short (the job's limit, a lost runner)
    cut_short = json.load(open(leftover)) if os.path.exists(leftover) else None
    for stale in ("new.json", "run.json", "triage.json", "ab.json", "ab.md", "summary.md"):
        if os.path.exists(os.path.join(work, stale)):
            os.remove(os.path.join(work, stale))
    candidate = args.candidate or git("rev-parse", "HEAD", cwd=args.source).stdout.strip()
    summary = [f"## offloadbench nightly: `{candidate[:12]}`", ""]
    status, verdict = 1, "failed"
    candidate_bin = build(args, candidate, os.path.join(work, "candidate"))
    machine = args.machine or fingerprint_id(candidate_bin)
    results = checkout_results(args, work)
    history = os.path.join(results, "history", machine)
    os.makedirs(history, exist_ok=True)
    os.makedirs(os.path.join(results, "baselines"), exist_ok=True)
    recorded = os.path.join(results, "baselines", f"{machine}.sha")
    base = args.base or (open(recorded).read().strip() if os.path.exists(recorded) else "")
    if not base:  # the first night on this machine: the commit before
        base = git("rev-parse", f"{candidate}~1", cwd=args.source).stdout.strip()
    tonight = os.path.join(history, f"{stamp()}-{candidate[:12]}.json")
    if cut_short and cut_short.get("benchmarks"):
        # What the last night measured before it was stopped joins the history, marked as such.
        cut_short["context"]["offloadbench"]["incomplete"] = True
        sha = str(cut_short["context"]["offloadbench"].get("git_sha", "unknown"))[:12]
        with open(os.path.join(history, f"{stamp()}-{sha}-cut-short.json"), "w") as f:
            json.dump(cut_short, f)
        push(results, f"history {machine}: {sha} (a night cut short, kept as far as it got)")
        summary.append(
            "- the previous night was cut short: what it measured is in the history, marked incomplete"
        )
    try:
        # 1. The history: one run, kept whatever follows (an interrupted run keeps what finished).
        new = os.path.join(work, "new.json")
        done = run(
            [
                candidate_bin,
                "run",
                *suite_args(args),
                "--repetitions",
                str(args.repetitions),
                "--out",
                new,
                *filter_flags(args.filter),
            ],
            check=False,
        )
        if not os.path.exists(new):
            raise NightError(f"the run for the history wrote nothing (exit {done.returncode})")
        shutil.copy(new, tonight)
        new_doc = json.load(open(new))
        os.replace(
            new, os.path.join(work, "run.json")
        )  # in the history now: not a leftover for the next night
        new = os.path.join(work, "run.json")
        incomplete = new_doc["context"]["offloadbench"].get("incomplete", False)
        push(results, f"history {machine}: {candidate[:12]}{' (incomplete)' if incomplete else ''}")
        summary.append(
            f"- history: `{os.path.relpath(tonight, results)}`"
            f"{' — **incomplete: cut short, kept as far as it got**' if incomplete else ''}"
        )
        invalid_rows = done.returncode == 1
        # 2. Triage against the previous night of this machine.
        previous = previous_night(history, tonight)
        triage = None
        if previous:
            tri = os.path.join(work, "triage.json")
            run([candidate_bin, "compare", previous, new, "--json", tri], check=False, capture=True)
            triage = json.load(open(tri)) if os.path.exists(tri) else None
        names, moved = ab_rows(triage, new_doc, args.probes)
        summary.append(
            f"- triage against {'the previous night' if previous else 'nothing (first night here)'}: "
            f"{moved} row(s) moved or could not be told; ab on {len(names)} row(s) "
            f"(with up to {args.probes} headline rows)"
        )
        # 3. ab between base and candidate on those rows only.
        ab_status = 0
        if names:
            base_bin = build(args, base, os.path.join(work, "base"))
            done = run(
                [
                    candidate_bin,
                    "ab",
                    base_bin,
                    candidate_bin,
                    *suite_args(args),
                    "--rounds",
                    str(args.rounds),
                    "--max-rounds",
                    str(args.max_rounds),
                    "--out",
                    os.path.join(work, "ab.json"),
                    "--markdown",
                    os.path.join(work, "ab.md"),
                    *filter_flags(exact_filter(names)),
                ],
                check=False,
            )
            ab_status = done.returncode
            if not os.path.exists(os.path.join(work, "ab.md")):
                raise NightError(f"ab wrote no verdict (exit {ab_status})")
            os.makedirs(os.path.join(results, "ab", machine), exist_ok=True)
            shutil.copy(
                os.path.join(work, "ab.json"),
                os.path.join(results, "ab", machine, os.path.basename(tonight)),
            )
            summary += [
                "",
                f"Base `{base[:12]}`, candidate `{candidate[:12]}`:",
                "",
                open(os.path.join(work, "ab.md")).read(),
            ]
        if ab_status not in (0, 1):
            raise NightError(f"ab exited {ab_status}")
        slower = ab_status == 1
        # 4. The base moves on a green night, or when told to.
        if not slower or args.accept:
            with open(recorded, "w") as f:
                f.write(candidate + "\n")
            why = "green" if not slower else "accepted (intended change)"
            push(results, f"base {machine}: {candidate[:12]} ({why})")
            verdict = "green" if not slower else "accepted"
        else:
            push(results, f"ab {machine}: {candidate[:12]} (SLOWER, base stays {base[:12]})")
            verdict = "SLOWER"
        status = 1 if (slower and not args.accept) or invalid_rows else 0
        if invalid_rows:
            summary.append("- some rows failed validation: see `validated` in the history file")
    except NightError as e:
        summary.append(f"- **the night stopped: {e}**; what finished is in the history")
        log(str(e))
    finally:
        # 5. Every machine's history, whatever happened tonight.
        dash = run(
            [candidate_bin, "dashboard", results, "--out", os.path.join(work, "dashboard")],
            check=False,
            capture=True,
        )
        summary.append(
            f"- dashboard: {'built' if dash.returncode == 0 else 'not built: ' + dash.stderr.strip()[-200:]}"
        )
        summary.insert(1, f"**{verdict}** on machine `{machine}`")
        text = "\n".join(summary) + "\n"
        with open(os.path.join(work, "summary.md"), "w") as f:
            f.write(text)
        if args.summary:
            with open(args.summary, "a") as f:
                f.write(text)
    log(f"{verdict} (exit {status})")
    return status


# ---- the plan ----

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def case_seconds(doc):
    """Per case: seconds one repetition took (iterations × time per iteration), from the file's rows."""
    per = {}
    for r in doc["benchmarks"]:
        if r.get("run_type") != "iteration" or r.get("skipped") or r.get("real_time") is None:
            continue
        s = r["iterations"] * r["real_time"] * UNIT.get(r.get("time_unit", "ns"), 1e-9)
        per.setdefault(r["name"], []).append(s)
    return {name: sorted(v)[len(v) // 2] for name, v in per.items()}


def wall_seconds(doc):
    ob = doc["context"]["offloadbench"]
    parse = lambda t: datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ")
    return (parse(ob["end_time_utc"]) - parse(ob["start_time_utc"])).total_seconds()


def plan(args):
    doc = json.load(open(args.results))
    per_case = case_seconds(doc)
    reps = doc["context"]["offloadbench"].get("repetitions", 3)
    timed = sum(per_case.values()) * reps
    wall = wall_seconds(doc)
    # Everything that is not a timed repetition (set-up, checks, warm-up, allocation) per case.
    overhead = max(wall - timed, 0) / max(len(per_case), 1)
    gpu = {
        n: s
        for n, s in per_case.items()
        if "/cpu" not in n and "cpu_" not in n and "host_memcpy" not in n
    }
    cpu = {n: s for n, s in per_case.items() if n not in gpu}
    gpus = args.gpus
    # One GPU's cases run once per GPU; the peer suite adds every ordered pair (its one-GPU patterns are
    # part of each GPU's cases already). A pair's patterns cost about what a large copy case costs.
    copy_cases = sorted(
        s + overhead for n, s in per_case.items() if n.startswith("transfer/") and "256MiB" in n
    )
    pair_case = copy_cases[len(copy_cases) // 2] if copy_cases else 1.0
    pairs = gpus * (gpus - 1)
    peer_s = pairs * args.peer_patterns * (pair_case * args.repetitions / reps)
    run_s = (
        sum(cpu.values()) * args.repetitions
        + len(cpu) * overhead
        + gpus * (sum(gpu.values()) * args.repetitions + len(gpu) * overhead)
        + peer_s
    )
    # ab: the probes plus what triage flags (assumed as many again), 3 repetitions a process, each round
    # BASE and NEW once, the extra rounds given to half of them; each process pays its start-up.
    probe_names = sorted(
        n for n in per_case if n in {r["name"] for r in doc["benchmarks"] if "headline" in r}
    )
    rows = probe_names[: args.probes]
    row_s = sum(per_case[n] * 3 + overhead for n in rows) * 2  # the probes and as many moved rows
    startup = args.process_startup
    ab_s = (args.rounds + (args.max_rounds - args.rounds) / 2) * 2 * (row_s * gpus + startup)
    build_s = args.build_minutes * 60
    steps = [
        ("two Release builds (candidate, base)", 2 * build_s),
        (
            f"run for the history: {len(per_case)} cases x {args.repetitions} repetitions on {gpus} GPU(s)"
            + (f", peer {pairs} pairs" if pairs else ""),
            run_s,
        ),
        ("triage (compare against the previous night)", 10),
        (
            f"ab on {len(rows)} headline + up to {len(rows)} moved rows, {args.rounds}-{args.max_rounds} rounds",
            ab_s,
        ),
        ("dashboard, history push", 60),
    ]
    total = sum(s for _, s in steps)
    print(
        f"plan from {os.path.basename(args.results)}: {len(per_case)} cases, {reps} repetitions in {wall:.0f} s "
        f"({overhead:.2f} s a case outside its timed repetitions)"
    )
    print("| step | minutes |\n|---|---|")
    for name, s in steps:
        print(f"| {name} | {s / 60:.1f} |")
    if pairs:
        print(
            f"| (of the run: the peer suite, {pairs} ordered pairs x {args.peer_patterns} patterns) | {peer_s / 60:.1f} |"
        )
    print(f"| **night** | **{total / 60:.0f}** |")
    limit = int(total / 60 * 1.5 + 15)
    print(f"timeout-minutes: {limit}  (the plan x 1.5 + 15)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    n = sub.add_parser("night", help="run one night")
    n.add_argument(
        "--results-remote",
        required=True,
        help="git remote (URL or path) holding the results branch",
    )
    n.add_argument("--results-branch", default="benchmark-results")
    n.add_argument("--source", default=ROOT, help="the project's git checkout (default: this one)")
    n.add_argument("--candidate", help="commit to measure (default: the source's HEAD)")
    n.add_argument("--base", help="compare with this commit instead of the machine's last good one")
    n.add_argument(
        "--accept", action="store_true", help="make the candidate the base even if SLOWER"
    )
    n.add_argument("--machine", help="machine id (default: offloadbench info's fingerprint id)")
    n.add_argument("--device", default="all")
    n.add_argument("--suite", default="all")
    n.add_argument(
        "--filter", default="", help="Google Benchmark filter for the run (default: everything)"
    )
    n.add_argument("--repetitions", type=int, default=10)
    n.add_argument("--rounds", type=int, default=20)
    n.add_argument("--max-rounds", type=int, default=40)
    n.add_argument("--probes", type=int, default=40, help="headline rows ab always measures")
    n.add_argument(
        "--build", help="command building $SHA into $OUT (default: release preset in a worktree)"
    )
    n.add_argument("--work", default="nightly")
    n.add_argument("--summary", default=os.environ.get("GITHUB_STEP_SUMMARY", ""))
    p = sub.add_parser("plan", help="minutes per step of a night, from a results file's own times")
    p.add_argument("results")
    p.add_argument("--gpus", type=int, default=1)
    p.add_argument("--repetitions", type=int, default=10)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--max-rounds", type=int, default=40)
    p.add_argument("--probes", type=int, default=40)
    p.add_argument("--peer-patterns", type=int, default=6, help="peer cases per ordered GPU pair")
    p.add_argument(
        "--process-startup",
        type=float,
        default=3.0,
        help="seconds a process takes to start and stop",
    )
    p.add_argument("--build-minutes", type=float, default=12.0, help="one Release build")
    args = parser.parse_args()
    try:
        if args.command == "plan":
            for key in ("gpus", "repetitions", "rounds", "probes"):
                if getattr(args, key) < 1:
                    raise ValueError(f"--{key} must be at least 1")
            if args.max_rounds < args.rounds:
                raise ValueError("--max-rounds must be at least --rounds")
            return plan(args)
        return night(args)
    except NightError as e:
        print(f"nightly: {e}", file=sys.stderr)
        return 1
    except (ValueError, OSError, KeyError, json.JSONDecodeError) as e:
        print(f"nightly: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
