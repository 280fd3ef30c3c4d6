#!/usr/bin/env python3
"""PyTorch eager on the GPU doing the mlp steps offloadbench's GPU rows time: the anchor the GPU issue names
("≥ 5× faster than PyTorch eager doing the same step on the same GPU"). Not a project dependency: it runs
where PyTorch with CUDA is already installed (the GPU machine's python3 has it), and is the GPU twin of
lab/tools/cpu_anchors.py, whose step it copies (nn.Linear → ReLU → nn.Linear, CrossEntropyLoss, SGD lr 0.1 or
AdamW lr 1e-3 wd 0.01; the faster of the default and the fused optimizer). Data are resident on the GPU,
as in offloadbench's `data_path: resident` rows.

Timing: 20 warm-up steps, then `--repetitions` repetitions of enough steps to last `--min-time` seconds,
synchronized before the clock starts and before it stops; a repetition gives wall µs per step, which is what
an eager loop costs (host dispatch included). The table gives median, min and max over repetitions.
Usage: python3 lab/tools/gpu_anchors.py [--out FILE.json] [--batches 1,64,1024,4096] [--models 784-128-10]
                                       [--results OFFLOADBENCH.json]   # and print ours beside PyTorch's
       python3 lab/tools/gpu_anchors.py --first-light --merge OFFLOADBENCH.json
--first-light times each step and a pinned and a pageable 256 MiB host-to-device copy with CUDA events (start
and end events around a batch of calls, synchronized after), and with --merge appends them to offloadbench's
results file as rows of its schema (series "pytorch", the fields of our row of the same case), so `summary`,
`plot` and the analysis put them beside ours; it prints a table of both.
Exit 2 where PyTorch or a CUDA GPU is missing. lab/tools/gpu-check's suite stage runs it after the suite, in the
same command, and puts mlp_comparison's table in its summary.
"""

import argparse
import json
import os
import statistics
import sys
import time

SHAPES = {"784-128-10": (784, 128, 10), "12288-64-10": (12288, 64, 10)}
VARIANTS = ("inference", "train_sgd", "train_adamw")


def time_step(torch, step, repetitions, min_time):
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(20):
        step()
    sync()
    start = time.perf_counter()
    step()
    sync()
    steps = max(10, int(min_time / max(time.perf_counter() - start, 1e-6)))
    samples = []
    for _ in range(repetitions):
        sync()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        samples.append((time.perf_counter() - start) / steps * 1e6)
    return samples, steps


def mlp_case(torch, model_name, batch, variant, repetitions, min_time, device="cuda"):
    nn = torch.nn
    D, H, C = SHAPES[model_name]
    torch.manual_seed(1234)
    model = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, C)).to(device)
    g = torch.Generator(device=device).manual_seed(42)
    xs = [torch.rand(batch, D, device=device, generator=g) * 2 - 1 for _ in range(4)]
    teacher = torch.randn(C, D, device=device, generator=g)
    ys = [(x @ teacher.T).argmax(dim=1) for x in xs]
    loss_fn = nn.CrossEntropyLoss()
    cursor = [0]

    def next_batch():
        i = cursor[0]
        cursor[0] = (i + 1) % len(xs)
        return xs[i], ys[i]

    if variant == "inference":

        def step():
            with torch.inference_mode():
                return model(next_batch()[0])

        samples, steps = time_step(torch, step, repetitions, min_time)
        return {"impl": "inference_mode", "samples_us": samples, "steps": steps}
    initial = [p.detach().clone() for p in model.parameters()]
    best = None
    for fused in (False, True):
        with torch.no_grad():
            for p, p0 in zip(model.parameters(), initial):
                p.copy_(p0)
        extra = {"fused": True} if fused else {}
        try:
            opt = (
                torch.optim.SGD(model.parameters(), lr=0.1, **extra)
                if variant == "train_sgd"
                else torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, **extra)
            )
        except (
            RuntimeError,
            TypeError,
            ValueError,
        ):  # no fused form of this optimizer in this PyTorch
            continue

        def step():
            x, y = next_batch()
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss

        with torch.no_grad():
            first = float(loss_fn(model(xs[0]), ys[0]))
        try:
            samples, steps = time_step(torch, step, repetitions, min_time)
        except RuntimeError:  # the fused form refused this device or dtype at its first step
            continue
        with torch.no_grad():
            last = float(loss_fn(model(xs[0]), ys[0]))
        row = {
            "impl": "fused" if fused else "default (foreach)",
            "samples_us": samples,
            "steps": steps,
            "initial_loss": first,
            "final_loss": last,
            "validated": last < first,
        }
        if best is None or statistics.median(samples) < statistics.median(best["samples_us"]):
            best = row
    return best


TIME_UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def our_step_us(results, model, batch, variant, launch):
    """Median µs per step of offloadbench's fp32 GPU row with resident data (device events), or None."""
    times = [
        r["real_time"] * TIME_UNIT_US[r.get("time_unit", "ns")]
        for r in results.get("benchmarks", [])
        if r.get("run_type") == "iteration"
        and not r.get("skipped")
        and r.get("family") == "mlp"
        and r.get("model") == model
        and r.get("batch") == batch
        and r.get("step_variant") == variant
        and r.get("precision") == "fp32"
        and r.get("launch_mode") == launch
        and r.get("data_path") == "resident"
        and r.get("device") not in (None, "cpu")
    ]
    return statistics.median(times) if times else None


def initial_losses(results, model, batch, variant):
    """{'cpu': loss, 'gpu': loss}: the first batch's loss before training, as each side's check measured it."""
    losses = {}
    for r in results.get("benchmarks", []):
        if (
            r.get("run_type") == "iteration"
            and not r.get("skipped")
            and r.get("family") == "mlp"
            and r.get("model") == model
            and r.get("batch") == batch
            and r.get("step_variant") == variant
            and r.get("precision", "fp32") == "fp32"
            and "initial_loss" in r
        ):
            losses.setdefault("cpu" if r.get("device") == "cpu" else "gpu", r["initial_loss"])
    return losses


def mlp_comparison(results, anchors):
    """Markdown lines: per anchor row, offloadbench's eager and graph steps beside PyTorch eager's, the
    speedup over PyTorch, whether the graph beat eager, and the CPU and GPU initial losses."""
    lines = [
        "| model | batch | step | ours eager µs | ours graph µs | PyTorch eager µs | PyTorch ÷ graph "
        "| graph < eager | loss CPU / GPU |",
        "|---|---:|---|---:|---:|---:|---:|---|---|",
    ]
    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    for a in anchors.get("rows", []):
        eager = our_step_us(results, a["model"], a["batch"], a["variant"], "eager")
        graph = our_step_us(results, a["model"], a["batch"], a["variant"], "graph")
        speedup = f"{a['median_us'] / graph:.2f}x" if graph else "-"
        faster = "-" if eager is None or graph is None else ("yes" if graph < eager else "**no**")
        losses = initial_losses(results, a["model"], a["batch"], a["variant"])
        loss = " / ".join(f"{losses[k]:.5g}" if k in losses else "-" for k in ("cpu", "gpu"))
        lines.append(
            f"| {a['model']} | {a['batch']} | {a['variant']} | {fmt(eager)} | {fmt(graph)} "
            f"| {a['median_us']:.1f} ({a['impl']}) | {speedup} | {faster} | {loss} |"
        )
    return lines


# ---- --first-light: CUDA-event times, as rows of offloadbench's results schema ----

FIRST_LIGHT_BATCHES = (1, 64, 1024)
ANCHOR_SERIES = ("pytorch", "numpy")  # rows measured by another library, never ours
COPY_BYTES = 256 << 20


def event_times(torch, call, repetitions, min_time, warmup=5):
    """[(seconds per call by CUDA events, calls, wall seconds per call)] per repetition: events recorded
    around a batch of calls, the batch long enough to last min_time."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    call()
    end.record()
    end.synchronize()
    calls = max(3, int(min_time / max(start.elapsed_time(end) / 1e3, 1e-6)))
    samples = []
    for _ in range(repetitions):
        torch.cuda.synchronize()
        wall = time.perf_counter()
        start.record()
        for _ in range(calls):
            call()
        end.record()
        end.synchronize()
        wall = time.perf_counter() - wall
        samples.append((start.elapsed_time(end) / 1e3 / calls, calls, wall / calls))
    return samples


def first_light_mlp(torch, batch, variant, repetitions, min_time):
    """PyTorch eager's fp32 step of 784-128-10 (TF32 off), the faster optimizer form, timed by events."""
    row = mlp_case(
        torch, "784-128-10", batch, variant, 1, 0.01
    )  # picks the faster optimizer form, checks the loss
    nn = torch.nn
    D, H, C = SHAPES["784-128-10"]
    torch.manual_seed(1234)
    model = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, C)).cuda()
    g = torch.Generator(device="cuda").manual_seed(42)
    x = torch.rand(batch, D, device="cuda", generator=g) * 2 - 1
    y = (x @ torch.randn(C, D, device="cuda", generator=g).T).argmax(dim=1)
    loss_fn = nn.CrossEntropyLoss()
    if variant == "inference":

        def step():
            with torch.inference_mode():
                model(x)
    else:
        extra = {"fused": True} if row["impl"] == "fused" else {}
        opt = (
            torch.optim.SGD(model.parameters(), lr=0.1, **extra)
            if variant == "train_sgd"
            else torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, **extra)
        )

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()

    samples = event_times(torch, step, repetitions, min_time)
    return samples, row


def first_light_copy(torch, pinned, repetitions, min_time):
    """A 256 MiB host-to-device copy as PyTorch users write it: `.to("cuda", non_blocking=True)` from a
    pinned tensor, `.to("cuda")` from a pageable one; the bytes are checked after the timed copies."""
    host = torch.randint(0, 256, (COPY_BYTES,), dtype=torch.uint8)
    if pinned:
        host = host.pin_memory()
    out = [None]

    def copy():
        out[0] = host.to("cuda", non_blocking=pinned)

    samples = event_times(torch, copy, repetitions, min_time, warmup=2)
    torch.cuda.synchronize()
    return samples, bool(torch.equal(out[0].cpu(), host))


def matching_row(results, **want):
    """Our first iteration row whose fields equal `want` (a GPU row, not skipped), or None."""
    for r in results.get("benchmarks", []):
        if (
            r.get("run_type") == "iteration"
            and not r.get("skipped")
            and r.get("device") not in (None, "cpu")
            and r.get("series") not in ANCHOR_SERIES
            and all(r.get(k) == v for k, v in want.items())
        ):
            return r
    return None


DESCRIPTIVE = (
    "family",
    "suite",
    "op",
    "view",
    "device",
    "model",
    "batch",
    "step_variant",
    "precision",
    "data_path",
    "launch_mode",
    "direction",
    "host_memory",
    "bytes",
    "compare_group",
    "sweep",
    "threading",
    "layers",
)


def anchor_entry(ours, name_if_missing, fields, samples, per_call, extra):
    """One measured anchor case in cpu_anchors' form: our row's descriptive fields, series pytorch."""
    base = {k: ours[k] for k in DESCRIPTIVE if ours and k in ours}
    base.update(fields, series="pytorch", timing="CUDA events around a batch of calls", **extra)
    name = (
        ours["run_name"].replace("/real_time", "").replace("/manual_time", "")
        if ours
        else name_if_missing
    )
    rows = [(seconds, calls, wall) for seconds, calls, wall in samples]
    return {
        "name": f"{name}/pytorch",
        "base": base,
        "samples": [(s, c, w) for s, c, w in rows],
        "per_step": per_call,
    }


def first_light(torch, results, repetitions, min_time):
    """[(anchor entry, our median seconds or None)] for the mlp steps and the two copies."""
    import cpu_anchors  # noqa: F401  (the row layout lives there)

    measured = []
    for batch in FIRST_LIGHT_BATCHES:
        for variant in VARIANTS:
            try:
                samples, checked = first_light_mlp(torch, batch, variant, repetitions, min_time)
            except Exception as e:  # noqa: BLE001  one case failing must not lose the others
                print(f"gpu_anchors: mlp b{batch} {variant}: {e!r}", file=sys.stderr)
                continue
            ours = matching_row(
                results,
                family="mlp",
                model="784-128-10",
                batch=batch,
                step_variant=variant,
                precision="fp32",
                data_path="resident",
                launch_mode="eager",
            )
            extra = {"impl": checked["impl"]}
            if "final_loss" in checked:
                extra.update(initial_loss=checked["initial_loss"], final_loss=checked["final_loss"])
            measured.append(
                anchor_entry(
                    ours,
                    f"mlp/784-128-10/{variant}/b{batch}/gpu/fp32/resident/eager",
                    {
                        "launch_mode": "eager",
                        "precision": "fp32",
                        "batch": batch,
                        "step_variant": variant,
                        "family": "mlp",
                    },
                    samples,
                    {"samples_per_second": batch},
                    extra,
                )
            )
            measured[-1]["validated"] = checked.get("validated", True)
    for pinned in (True, False):
        memory = "pinned" if pinned else "pageable"
        try:
            samples, same = first_light_copy(torch, pinned, repetitions, min_time)
        except Exception as e:  # noqa: BLE001
            print(f"gpu_anchors: {memory} copy: {e!r}", file=sys.stderr)
            continue
        ours = matching_row(
            results, family="transfer", direction="h2d", host_memory=memory, bytes=COPY_BYTES
        )
        measured.append(
            anchor_entry(
                ours,
                f"transfer/h2d/{memory}/256MiB",
                {
                    "family": "transfer",
                    "direction": "h2d",
                    "host_memory": memory,
                    "bytes": COPY_BYTES,
                },
                samples,
                {"bytes_per_second": COPY_BYTES},
                {"impl": ".to('cuda', non_blocking=True)" if pinned else ".to('cuda')"},
            )
        )
        measured[-1]["validated"] = same
    return measured


def to_rows(measured, repetitions):
    """cpu_anchors.to_benchmark_rows with device-event times: real_time is the events' time per call, and
    the wall time per call (host dispatch included) is kept as host_time_s."""
    import cpu_anchors

    out = cpu_anchors.to_benchmark_rows(
        [dict(m, samples=[(s, c, w) for s, c, w in m["samples"]]) for m in measured], repetitions
    )
    by_name = {m["name"] + "/real_time": m for m in measured}
    for row in out:
        m = by_name[
            row["name"].rsplit("_", 1)[0] if row["run_type"] == "aggregate" else row["name"]
        ]
        if row["run_type"] == "iteration":
            row["host_time_s"] = m["samples"][row["repetition_index"]][2]
            row["device_time_s"] = m["samples"][row["repetition_index"]][0]
            row["validated"] = m.get("validated", True)
    return out


def first_light_table(results, measured):
    """Markdown: each anchor case, our median beside PyTorch's (events both), and their ratio."""
    lines = [
        "| case | ours (median) | PyTorch (median) | PyTorch ÷ ours | PyTorch checked |",
        "|---|---:|---:|---:|---|",
    ]
    for m in measured:
        theirs = statistics.median(s[0] for s in m["samples"])
        b = m["base"]
        want = {
            k: b[k]
            for k in (
                "family",
                "model",
                "batch",
                "step_variant",
                "precision",
                "data_path",
                "direction",
                "host_memory",
                "bytes",
            )
            if k in b
        }
        unit = (
            (lambda t: f"{COPY_BYTES / t / 1e9:.1f} GB/s")
            if b["family"] == "transfer"
            else (lambda t: f"{t * 1e6:.1f} µs")
        )
        for launch in ("eager", "graph") if b["family"] == "mlp" else (None,):
            if launch:
                want["launch_mode"] = launch
            times = [
                r["real_time"]
                * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[r.get("time_unit", "ns")]
                for r in results.get("benchmarks", [])
                if r.get("run_type") == "iteration"
                and not r.get("skipped")
                and r.get("series") not in ANCHOR_SERIES
                and r.get("device") not in (None, "cpu")
                and all(r.get(k) == v for k, v in want.items())
            ]
            ours = statistics.median(times) if times else None
            label = m["name"].replace("/pytorch", "") + (f" (ours {launch})" if launch else "")
            lines.append(
                f"| {label} | {unit(ours) if ours else '-'} | {unit(theirs)} | "
                f"{theirs / ours if ours else float('nan'):.2f}x | {'yes' if m.get('validated') else 'NO'} |"
            )
    return lines


def run_first_light(torch, args):
    path = args.merge
    results = {}
    if path:
        try:
            with open(path) as f:
                results = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            print(f"gpu_anchors: cannot read --merge file '{path}': {e}", file=sys.stderr)
            return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    measured = first_light(torch, results, args.repetitions, args.min_time)
    rows = to_rows(measured, args.repetitions)
    print(
        f"PyTorch {torch.__version__} on {torch.cuda.get_device_name(0)}: CUDA events, median of "
        f"{args.repetitions} repetitions"
    )
    print("\n".join(first_light_table(results, measured)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(
                {
                    "torch": torch.__version__,
                    "gpu": torch.cuda.get_device_name(0),
                    "benchmarks": rows,
                },
                f,
                indent=1,
            )
    if path:
        import cpu_anchors

        merged, _ = cpu_anchors.merge_into(path, rows)
        merged.setdefault("context", {}).setdefault("anchors", []).append(
            {
                "series": "pytorch",
                "torch": torch.__version__,
                "script": "lab/tools/gpu_anchors.py --first-light",
            }
        )
        tmp = f"{path}.tmp-anchors"
        with open(tmp, "w") as f:
            json.dump(merged, f, indent=1)
        os.replace(tmp, path)  # atomic: the results file is never half written
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out")
    p.add_argument("--models", default="784-128-10")
    p.add_argument("--batches", default="1,64,1024,4096")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument(
        "--device",
        default="cuda",
        choices=["cuda", "cpu"],
        help="cpu only checks this script where there is no GPU (its times are not the CPU anchor: "
        "lab/tools/cpu-anchors is)",
    )
    p.add_argument(
        "--results", help="an offloadbench results file of the same GPU: print ours beside PyTorch"
    )
    p.add_argument(
        "--first-light",
        action="store_true",
        help="the first-light anchors: mlp steps at batch 1, 64, 1024 and 256 MiB H2D copies, CUDA events",
    )
    p.add_argument(
        "--merge",
        help="with --first-light: append the anchor rows to this offloadbench results file",
    )
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(f"gpu_anchors: PyTorch is not installed here ({e})", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpu_anchors: PyTorch sees no CUDA GPU", file=sys.stderr)
        return 2
    if args.first_light:
        if args.device != "cuda":
            print("gpu_anchors: --first-light needs a CUDA GPU", file=sys.stderr)
            return 2
        if args.min_time == p.get_default("min_time"):
            args.min_time = 0.1
        args.repetitions = (
            min(args.repetitions, 3)
            if args.repetitions == p.get_default("repetitions")
            else args.repetitions
        )
        return run_first_light(torch, args)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 as offloadbench's fp32 rows
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    device_name = (
        torch.cuda.get_device_name(0)
        if args.device == "cuda"
        else "the CPU (a check of this script)"
    )
    print(f"PyTorch {torch.__version__} on {device_name}; wall us per step, eager, resident data")
    print(f"{'model':<12} {'batch':>5} {'variant':<12} {'median':>9} {'min':>9} {'max':>9}  impl")
    for model_name in args.models.split(","):
        for batch in map(int, args.batches.split(",")):
            for variant in VARIANTS:
                row = mlp_case(
                    torch, model_name, batch, variant, args.repetitions, args.min_time, args.device
                )
                row.update(
                    {
                        "model": model_name,
                        "batch": batch,
                        "variant": variant,
                        "median_us": statistics.median(row["samples_us"]),
                    }
                )
                rows.append(row)
                s = row["samples_us"]
                print(
                    f"{model_name:<12} {batch:>5} {variant:<12} {row['median_us']:9.1f} {min(s):9.1f} "
                    f"{max(s):9.1f}  {row['impl']}"
                    + ("" if row.get("validated", True) else "  LOSS DID NOT FALL")
                )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(
                {
                    "torch": torch.__version__,
                    "gpu": device_name,
                    "timing": "wall us per step after synchronize, eager, resident data",
                    "rows": rows,
                },
                f,
                indent=1,
            )
    if args.results:
        with open(args.results) as f:
            print("\n".join(mlp_comparison(json.load(f), {"rows": rows})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
