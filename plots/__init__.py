"""offloadbench's charts and report.html, drawn from one results file (nothing is re-run).

`python -m plots FILE [--out DIR]`: one module per chart family (bandwidth, timing, mlp, overlap,
pinning); each returns the charts it could draw and what it could not, and report.py puts them
together with the summary table and the machine context.
"""
