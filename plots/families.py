"""The charts each benchmark family draws, found rather than listed: every benchmarks/<family>/*_charts.py
beside the plots package (in a checkout, and where `cmake --install` puts them). A chart module declares
ORDER (its place in report.html), TITLE (its name in a "could not be drawn" line) and charts(doc, outdir);
optionally FLEET_SWEEPS (its curves in the fleet report) and DRAWS_OWN_GROUPS (its compare groups are
its own charts', not the generic time and speedup charts'). Module names are the files' stems, which
the layout keeps unique."""

import importlib
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def chart_files(root=ROOT):
    return sorted((root / "benchmarks").glob("*/*_charts.py"))


def modules(root=ROOT):
    """The family chart modules, by ORDER (then name)."""
    found = []
    for path in chart_files(root):
        folder = str(path.parent)
        if folder not in sys.path:
            sys.path.append(folder)  # siblings import each other by stem (one family's modules)
        found.append(importlib.import_module(path.stem))
    return sorted(found, key=lambda m: (getattr(m, "ORDER", 1000), m.__name__))


def module(stem, root=ROOT):
    """One family chart module by its file stem (e.g. for tests)."""
    return next(m for m in modules(root) if m.__name__ == stem)


def family_of(chart_module):
    """The family a chart module belongs to: the name of its folder."""
    return pathlib.Path(chart_module.__file__).parent.name


def families_drawing_own_groups(root=ROOT):
    return {family_of(m) for m in modules(root) if getattr(m, "DRAWS_OWN_GROUPS", False)}
