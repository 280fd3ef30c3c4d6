"""Trend of chosen benchmarks over nightly runs: the median per run, a noise band (interquartile range
of the repetitions, and their full range lighter), and the change points `offloadbench history` found,
marked with the git SHA where each step appeared.

    python -m plots.trend results/nightly/ [--benchmark REGEX ...] [--out trend.png]
    python -m plots.trend history.json     (the output of `offloadbench history DIR --json history.json`)

A directory is read through `offloadbench history` (found via --offloadbench, $OFFLOADBENCH_BIN, PATH or
build/*/offloadbench), so the change points drawn are exactly the ones the CLI reports.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from . import files

ROOT = pathlib.Path(__file__).resolve().parents[1]


class InputError(Exception):
    """Bad input: printed on one line, exit status 2."""


def find_offloadbench(explicit=None):
    candidates = [
        explicit,
        os.environ.get("OFFLOADBENCH_BIN"),
        shutil.which("offloadbench"),
        ROOT / "build" / "release" / "offloadbench",
        ROOT / "build" / "test" / "offloadbench",
    ]
    for candidate in candidates:
        if candidate and pathlib.Path(candidate).is_file():
            return str(candidate)
    raise InputError("offloadbench not found (pass --offloadbench or set OFFLOADBENCH_BIN)")


def load_history(source, metric="real_time", offloadbench=None):
    """The history JSON for a directory of results files, or read from a history JSON file."""
    path = pathlib.Path(source)
    if path.is_dir():
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "history.json"
            done = subprocess.run(
                [
                    find_offloadbench(offloadbench),
                    "history",
                    str(path),
                    "--metric",
                    metric,
                    "--json",
                    str(out),
                ],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                raise InputError(
                    done.stderr.strip() or f"offloadbench history failed ({done.returncode})"
                )
            return json.loads(out.read_text())
    try:
        history = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise InputError(f"{source}: cannot read history JSON ({e})") from None
    if not isinstance(history, dict) or "benchmarks" not in history or "runs" not in history:
        raise InputError(f"{source}: not an offloadbench history file (no 'runs' and 'benchmarks')")
    return history


def select_benchmarks(history, patterns=(), limit=6):
    """Benchmarks matching any pattern (all when none), those with change points first, at most `limit`."""
    chosen = [
        b
        for b in history["benchmarks"]
        if not patterns or any(re.search(p, b["name"]) for p in patterns)
    ]
    chosen.sort(key=lambda b: -len(b["change_points"]))
    return chosen[:limit]


def _scale(metric, values):
    """(factor, unit) that makes the largest value readable."""
    top = max(values) if values else 1.0
    if metric.endswith("_per_second"):
        for factor, unit in ((1e12, "T/s"), (1e9, "G/s"), (1e6, "M/s")):
            if top >= factor:
                return 1 / factor, unit
        return 1.0, "/s"
    if metric in ("real_time", "cpu_time"):
        for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
            if top >= factor:
                return 1 / factor, unit
        return 1e9, "ns"
    return 1.0, ""


def draw(history, benchmarks, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = history["runs"]
    fig, axes = plt.subplots(
        len(benchmarks), 1, figsize=(10, 2.8 * len(benchmarks)), squeeze=False, sharex=True
    )
    for ax, bench in zip(axes[:, 0], benchmarks):
        points = bench["points"]
        x = [p["run"] for p in points]
        factor, unit = _scale(history["metric"], [p["max"] for p in points])
        scaled = {k: [p[k] * factor for p in points] for k in ("median", "q1", "q3", "min", "max")}
        ax.fill_between(
            x,
            scaled["min"],
            scaled["max"],
            alpha=0.15,
            color="tab:blue",
            label="range of repetitions",
        )
        ax.fill_between(
            x, scaled["q1"], scaled["q3"], alpha=0.35, color="tab:blue", label="interquartile range"
        )
        ax.plot(x, scaled["median"], marker="o", markersize=3, color="tab:blue", label="median")
        for cp in bench["change_points"]:
            run = points[cp["point"]]["run"]
            color = "tab:red" if cp["verdict"] == "SLOWER" else "tab:green"
            ax.axvline(run - 0.5, color=color, linestyle="--")
            ax.annotate(
                f"{cp['change'] * 100:+.1f}% at {cp['git_sha']}",
                (run - 0.5, max(scaled["max"])),
                color=color,
                fontsize=8,
                ha="left",
                va="top",
            )
        ax.set_title(bench["name"], fontsize=9)
        ax.set_ylabel(f"{history['metric']} [{unit}]" if unit else history["metric"], fontsize=8)
        ax.grid(alpha=0.3)
    labels = [r["git_sha"][:8] for r in runs]
    last = axes[-1, 0]
    step = max(1, len(runs) // 20)
    last.set_xticks(range(0, len(runs), step))
    last.set_xticklabels(labels[::step], rotation=45, ha="right", fontsize=7)
    last.set_xlabel("nightly run (git SHA)")
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    image_format = pathlib.Path(out).suffix[1:].lower() or "png"
    from . import common

    common.literal_texts(fig)
    try:  # whole or not at all: a temporary file beside `out`, renamed over it
        files.write_atomically(out, lambda f: fig.savefig(f, format=image_format, dpi=110))
    finally:
        plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m plots.trend", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument(
        "source", help="directory of results files, or a history JSON from `offloadbench history`"
    )
    parser.add_argument(
        "--benchmark", action="append", default=[], help="regex of benchmark names (repeatable)"
    )
    parser.add_argument(
        "--metric", default="real_time", help="row field, when SOURCE is a directory"
    )
    parser.add_argument("--limit", type=int, default=6, help="at most this many benchmarks")
    parser.add_argument("--out", default="trend.png", help="image to write (PNG, SVG or PDF)")
    parser.add_argument("--offloadbench", help="path of the offloadbench executable")
    args = parser.parse_args(argv)
    try:
        history = load_history(args.source, args.metric, args.offloadbench)
        chosen = select_benchmarks(history, args.benchmark, args.limit)
        if not chosen:
            raise InputError(f"{args.source}: no benchmark matches {args.benchmark or 'anything'}")
        draw(history, chosen, args.out)
    except InputError as e:
        print(f"plots.trend: {e}", file=sys.stderr)
        return 2
    except files.OutputError as e:
        print(f"plots.trend: {e}", file=sys.stderr)
        return 1
    print(f"trend: {args.out} ({len(chosen)} benchmark(s), {len(history['runs'])} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
