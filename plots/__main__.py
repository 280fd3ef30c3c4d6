"""python -m plots FILE [--out DIR]: every chart the results file allows, and report.html.

Exit 0 when the report was written (charts that cannot be drawn are listed as missing in it);
2 with a one-line message when nothing could be done: the file cannot be used, the output folder
cannot be made or written in, or this Python cannot load matplotlib (not installed, a bad MPLBACKEND);
1 with a one-line message when an output could not be written part way (a full disk). Every chart
and report.html is written to a temporary file and renamed, so none is ever left half-written.
"""

import argparse
import os
import pathlib
import sys

from . import files, results


def chart_families():
    """(label, module) of every chart module: the generic time and speedup charts, then each family's
    (plots/families.py) in their ORDER; imported here so that a Python without matplotlib gets one
    clear line."""
    from . import families, timing

    found = [(timing.TITLE, timing)] + [(m.TITLE, m) for m in families.modules()]
    return sorted(found, key=lambda entry: entry[1].ORDER)


def matplotlib_problem(error):
    """One line for an error raised while matplotlib loads, naming MPLBACKEND when that is the cause."""
    backend = os.environ.get("MPLBACKEND")
    if backend is not None and "backend" in str(error):
        return (
            f"MPLBACKEND={backend!r} is not a backend matplotlib knows (unset it: the charts are always "
            "drawn with the headless Agg backend)"
        )
    why = " ".join(str(error).split())  # one line
    return (
        f"matplotlib cannot be loaded by {sys.executable}: {type(error).__name__}: {why} (run scripts/setup, "
        "or set OFFLOADBENCH_PYTHON to a Python with a working matplotlib)"
    )


def remove_if_empty(outdir, made_here):
    """A chart folder this run made and could not write anything in is not left behind."""
    if made_here:
        try:
            outdir.rmdir()  # only when empty: the charts written whole stay
        except OSError:
            pass


def main(argv=None):
    files.honour_ctrl_c()
    try:
        return draw(argv)
    except KeyboardInterrupt:  # Ctrl-C: no traceback, and no partial set of charts left behind
        files.remove_written()
        print("plots: interrupted; the charts written so far were removed", file=sys.stderr)
        return 130


def draw(argv):
    # (__doc__ or ""): python -OO (PYTHONOPTIMIZE=2) drops docstrings
    parser = argparse.ArgumentParser(
        prog="python -m plots", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("file", nargs="?", help="offloadbench results file (JSON)")
    parser.add_argument(
        "--out", help="folder for the charts (default: <file stem>-plots beside the file)"
    )
    parser.add_argument(
        "--analysis",
        help="a JSON file holding the analysis block to draw from, for a results "
        "file that has none (`offloadbench plot` passes one; FILE itself is never written)",
    )
    parser.add_argument(
        "--check", action="store_true", help="only check that matplotlib can be imported"
    )
    args = parser.parse_args(argv)
    try:  # first, so that a Python without matplotlib leaves nothing behind
        families = chart_families()
    except ImportError as e:
        print(
            f"plots: {e.name or e} is not installed for {sys.executable} (install matplotlib: sudo apt install "
            f"python3-matplotlib, or {sys.executable} -m pip install matplotlib; in a checkout, scripts/setup; "
            "or set OFFLOADBENCH_PYTHON to a Python with matplotlib)",
            file=sys.stderr,
        )
        return 2
    except (
        Exception
    ) as e:  # matplotlib refuses its settings at import: a bad MPLBACKEND, a broken install
        print(f"plots: {matplotlib_problem(e)}", file=sys.stderr)
        return 2
    if args.check:
        print("plots: ready")  # `offloadbench plot` looks for this line before it goes on
        return 0
    if not args.file:
        parser.error("the results FILE is required")
    try:
        doc = results.load(args.file)
        if args.analysis and results.analysis(doc) is None:
            doc["analysis"] = results.load_analysis(args.analysis)
    except results.ResultsError as e:
        print(f"plots: {e}", file=sys.stderr)
        return 2
    source = pathlib.Path(args.file)
    files.protect(args.file, *([args.analysis] if args.analysis else []))
    outdir = pathlib.Path(args.out) if args.out else source.with_name(f"{source.stem}-plots")
    try:
        files.check_not_input(outdir / "report.html")
        made_outdir = files.output_folder(outdir)
    except files.OutputError as e:
        print(f"plots: {e}", file=sys.stderr)
        return 2
    from . import report

    charts, missing = [], []
    try:
        for label, module in families:
            try:
                drawn, not_drawn = module.charts(doc, outdir)
            except files.OutputError:
                raise  # the disk, not the chart: no report that would call it undrawable
            except Exception as e:  # one broken family must not cost the others their charts
                drawn, not_drawn = [], [f"{label}: could not be drawn ({type(e).__name__}: {e})"]
            charts += drawn
            missing += not_drawn
        path = report.write(doc, source, outdir, charts, missing)
    except files.OutputError as e:
        print(f"plots: {e} (report.html not written)", file=sys.stderr)
        remove_if_empty(outdir, made_outdir)
        return 1
    except KeyboardInterrupt:
        files.remove_written()
        remove_if_empty(outdir, made_outdir)
        raise
    absent = report.no_gpu_measured(doc)
    print(
        f"plots: {len(charts)} chart(s), "
        + (
            f"{len(missing)} not applicable on this machine ({absent})"
            if absent
            else f"{len(missing)} missing"
        )
        + f"; report: {path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
