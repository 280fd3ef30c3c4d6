"""python -m plots.dashboard TREE --out SITE: the nightly history of every machine as a static site.

TREE is the nightly results branch that ci/nightly-gpu.yml keeps:
    history/<machine>/*.json   one full run per night (read through `offloadbench history`)
    ab/<machine>/*.json        the nightly A/B verdicts (optional; the newest is shown)
    baselines/<machine>.sha    the machine's last good commit (optional)
SITE gets index.html (every machine and the open regressions across them), <machine>/index.html (GPU,
driver, link, the newest A/B verdict, the change points found) and <machine>/<family>.html (each
benchmark's trend: median, noise band, change points with their commit), charts as SVG. No server, no
JavaScript. The site is built in a new folder beside SITE and renamed into place when complete, so a
failure leaves the previous site as it was. Exit 2 with one line for bad input, 1 when writing failed.
"""

import argparse
import concurrent.futures
import os
import pathlib
import shutil
import sys
import tempfile

from . import dashboard_pages, files, results, trend

MARKER = ".offloadbench-dashboard"  # a folder holding it may be replaced by a new site
InputError = trend.InputError
_NUMBER = {"type": ["number", "null"]}
AB_SCHEMA = {  # what the pages use of an `offloadbench ab --out` file (cli/cmd_ab.cpp), typed before any use
    "type": "object",
    "properties": {
        "counts": {
            "type": "object",
            "properties": {
                k: {"type": "integer", "minimum": 0}
                for k in ("SLOWER", "FASTER", "SAME", "INCONCLUSIVE")
            },
        },
        "benchmarks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "verdict": {"type": "string"},
                    "reason": {"type": "string"},
                    "change": _NUMBER,
                    "interval_low": _NUMBER,
                    "interval_high": _NUMBER,
                },
            },
        },
        "context": {"type": "object"},
    },
}


def in_tree(tree, path):
    """`path`, when it lies inside `tree` once links are resolved; InputError otherwise: the tree comes
    from other machines, and a link out of it (to /proc/self/environ, .git/config) would be published."""
    if not path.resolve().is_relative_to(tree.resolve()):
        raise InputError(f"{path}: a link out of the tree {tree} (not followed)")
    return path


def open_regressions(history):
    """Benchmarks whose latest change point is a slowdown: the level they are at now is the slower one."""
    return [
        (b, b["change_points"][-1])
        for b in history["benchmarks"]
        if b["change_points"] and b["change_points"][-1]["verdict"] == "SLOWER"
    ]


def machine_description(run_path):
    """GPU, driver, link and CPU of a machine, from the context of one of its results files."""
    try:
        context = results.load(run_path)["context"]
    except results.ResultsError as e:
        raise InputError(str(e)) from None
    cuda, host = context.get("cuda") or {}, context.get("host") or {}
    gpus, links = [], []
    for gpu in cuda.get("gpus") or []:
        gpus.append(str(gpu.get("name", "?")))
        link = gpu.get("pcie_link") or {}
        if link.get("current_generation"):
            links.append(
                f"PCIe Gen{link['current_generation']} x{link.get('current_width', '?')}, "
                f"{(link.get('theoretical_bytes_per_second') or 0) / 1e9:.1f} GB/s per direction"
                + (" (degraded)" if link.get("degraded") else "")
            )
    return {
        "gpu": ", ".join(gpus) or "none (CPU only)",
        "gpu_note": "" if gpus else cuda.get("unavailable_reason") or "",
        "driver": cuda.get("driver_release") or "none",
        "cuda_runtime": cuda.get("cuda_runtime_version") or "?",
        "link": "; ".join(dict.fromkeys(links)) or "none",
        "cpu": f"{host.get('cpu_model', '?')} ({host.get('logical_cpus', '?')} logical CPUs)",
        "host": host.get("hostname") or context.get("host_name") or "?",
        "fingerprint": (context.get("machine_fingerprint") or {}).get("id", "?"),
    }


def newest_ab(tree, folder):
    """The newest A/B verdict in `folder` (files are named <UTC stamp>-<sha>.json), or None."""
    found = sorted(in_tree(tree, folder).glob("*.json")) if folder.is_dir() else []
    if not found:
        return None
    path = found[-1]
    try:
        ab = results.load_json(path, AB_SCHEMA)
    except results.ResultsError as e:
        raise InputError(f"cannot read the A/B verdict: {e}") from None
    if (
        not isinstance(ab, dict)
        or not isinstance(ab.get("counts"), dict)
        or not isinstance(ab.get("benchmarks"), list)
    ):
        raise InputError(f"{path}: not an offloadbench ab file (no 'counts' and 'benchmarks')")
    return {
        "file": path.name,
        "counts": ab["counts"],
        "benchmarks": ab["benchmarks"],
        "context": ab.get("context") if isinstance(ab.get("context"), dict) else {},
    }


def baseline_commit(tree, path):
    """The machine's last good commit from baselines/<machine>.sha: a small regular UTF-8 file of the tree."""
    if not os.path.lexists(path):
        return ""
    try:
        return results.read_tree_text(in_tree(tree, path.parent) / path.name).strip()
    except results.ResultsError as e:
        raise InputError(f"cannot read the baseline: {e}") from None


def read_machine(tree, folder, metric, offloadbench):
    history = trend.load_history(in_tree(tree, folder), metric, offloadbench)
    families = {}
    for bench in history["benchmarks"]:
        families.setdefault(dashboard_pages.family_of(bench["name"]), []).append(bench)
    return {
        "name": folder.name,
        "history": history,
        "families": families,
        "open": open_regressions(history),
        "description": machine_description(history["runs"][-1]["path"]),
        "ab": newest_ab(tree, tree / "ab" / folder.name),
        "baseline": baseline_commit(tree, tree / "baselines" / f"{folder.name}.sha"),
    }


def read_tree(tree, metric, offloadbench):
    """Every machine folder under TREE/history with at least one results file, by name."""
    root = tree / "history"
    if not root.is_dir():
        raise InputError(
            f"{tree}: no history/ folder (the layout of the nightly results branch: "
            "history/<machine>/*.json)"
        )
    folders = sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.json")))
    if not folders:
        raise InputError(f"{root}: no machine folder with results files (history/<machine>/*.json)")
    return [read_machine(tree, folder, metric, offloadbench) for folder in folders]


def draw_trends(jobs, charts):
    """One SVG per benchmark: `charts` is [(path, bench)], drawn on `jobs` processes."""
    if not charts:
        return
    chunks = [charts[i::jobs] for i in range(jobs)]
    if jobs == 1:
        dashboard_pages.draw_charts(chunks[0])
        return
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        list(pool.map(dashboard_pages.draw_charts, chunks))  # re-raises a chart's error here


def prepare_out(out):
    """SITE may be new, empty, or a site this module made: anything else is refused before any work."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise InputError(
            f"--out {out} is a folder with other files in it (not a dashboard this command made); "
            "choose a new or empty folder"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        files.check_writable(out.parent)
    except OSError as e:
        raise InputError(f"cannot create {out.parent}: {e.strerror}") from None
    except files.OutputError as e:
        raise InputError(str(e)) from None


def swap_into_place(staged, out):
    """Renames the complete site `staged` to `out`, the previous site (if any) out of the way first."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(staged, 0o777 & ~mask)  # mkdtemp made it private
    old = None
    if out.exists():
        old = pathlib.Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
        os.replace(out, old / "site")
    os.replace(staged, out)
    if old:
        shutil.rmtree(old, ignore_errors=True)


def build(tree, out, metric="real_time", offloadbench=None, jobs=None):
    prepare_out(out)
    machines = read_tree(tree, metric, offloadbench)
    staged = pathlib.Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.new-"))
    try:
        charts = dashboard_pages.write_site(staged, machines)
        draw_trends(jobs or min(8, os.cpu_count() or 1), charts)
        files.write_text_atomically(
            staged / MARKER, "made by offloadbench dashboard; replaced whole on each build\n"
        )
        files.write_text_atomically(
            staged / ".nojekyll", ""
        )  # GitHub Pages: serve the files as they are
        swap_into_place(staged, out)
    except OSError as e:
        raise files.OutputError(
            f"cannot write the site in {out.parent}: {e.strerror or e}"
        ) from None
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return machines, len(charts)


def main(argv=None):
    files.honour_ctrl_c()
    parser = argparse.ArgumentParser(
        prog="python -m plots.dashboard", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("tree", help="the nightly results tree (with history/<machine>/*.json)")
    parser.add_argument(
        "--out", required=True, help="folder of the site (new, empty, or a previous dashboard)"
    )
    parser.add_argument("--metric", default="real_time", help="row field the trends follow")
    parser.add_argument("--offloadbench", help="path of the offloadbench executable")
    parser.add_argument(
        "--jobs", type=int, help="processes drawing charts (default: CPUs, at most 8)"
    )
    args = parser.parse_args(argv)
    try:
        if args.jobs is not None and args.jobs < 1:
            raise InputError(f"--jobs {args.jobs} must be at least 1")
        tree, out = pathlib.Path(args.tree), pathlib.Path(args.out)
        if not tree.is_dir():
            raise InputError(f"{tree}: not a folder")
        machines, charts = build(tree, out, args.metric, args.offloadbench, args.jobs)
    except InputError as e:
        print(f"dashboard: {e}", file=sys.stderr)
        return 2
    except (
        KeyboardInterrupt
    ):  # the staged site is removed on the way out; the previous one is left as it was
        print("dashboard: interrupted; the previous site (if any) is unchanged", file=sys.stderr)
        return 130
    except files.OutputError as e:
        print(f"dashboard: {e}", file=sys.stderr)
        return 1
    regressions = sum(len(m["open"]) for m in machines)
    print(
        f"dashboard: {len(machines)} machine(s), {charts} chart(s), {regressions} open regression(s); "
        f"site: {out / 'index.html'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
