"""offloadbench's charts and report.html, drawn from one results file (nothing is re-run).

`python -m plots FILE [--out DIR]`: the generic time and speedup charts (timing.py) and each benchmark
family's own chart modules, found in its folder (families.py: benchmarks/<family>/*_charts.py); each
returns the charts it could draw and what it could not, and report.py puts them together with the
summary table and the machine context.
"""
