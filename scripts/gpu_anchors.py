#!/usr/bin/env python3
"""PyTorch eager on the GPU doing the mlp steps offloadbench's GPU rows time: the anchor the GPU issue names
("≥ 5× faster than PyTorch eager doing the same step on the same GPU"). Not a project dependency: it runs
where PyTorch with CUDA is already installed (the GPU machine's python3 has it), and is the GPU twin of
scripts/cpu_anchors.py, whose step it copies (nn.Linear → ReLU → nn.Linear, CrossEntropyLoss, SGD lr 0.1 or
AdamW lr 1e-3 wd 0.01; the faster of the default and the fused optimizer). Data are resident on the GPU,
as in offloadbench's `data_path: resident` rows.

Timing: 20 warm-up steps, then `--repetitions` repetitions of enough steps to last `--min-time` seconds,
synchronized before the clock starts and before it stops; a repetition gives wall µs per step, which is what
an eager loop costs (host dispatch included). The table gives median, min and max over repetitions.
Usage: python3 scripts/gpu_anchors.py [--out FILE.json] [--batches 1,64,1024,4096] [--models 784-128-10]
                                     [--results OFFLOADBENCH.json]   # and print ours beside PyTorch's
Exit 2 where PyTorch or a CUDA GPU is missing. scripts/gpu-check's suite stage runs it after the suite, in the
same command, and puts mlp_comparison's table in its summary.
"""
import argparse
import json
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
            opt = (torch.optim.SGD(model.parameters(), lr=0.1, **extra) if variant == "train_sgd" else
                   torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, **extra))
        except (RuntimeError, TypeError, ValueError):  # no fused form of this optimizer in this PyTorch
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
        row = {"impl": "fused" if fused else "default (foreach)", "samples_us": samples, "steps": steps,
               "initial_loss": first, "final_loss": last, "validated": last < first}
        if best is None or statistics.median(samples) < statistics.median(best["samples_us"]):
            best = row
    return best


TIME_UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def our_step_us(results, model, batch, variant, launch):
    """Median µs per step of offloadbench's fp32 GPU row with resident data (device events), or None."""
    times = [r["real_time"] * TIME_UNIT_US[r.get("time_unit", "ns")] for r in results.get("benchmarks", [])
             if r.get("run_type") == "iteration" and not r.get("skipped") and r.get("family") == "mlp"
             and r.get("model") == model and r.get("batch") == batch and r.get("step_variant") == variant
             and r.get("precision") == "fp32" and r.get("launch_mode") == launch
             and r.get("data_path") == "resident" and r.get("device") not in (None, "cpu")]
    return statistics.median(times) if times else None


def initial_losses(results, model, batch, variant):
    """{'cpu': loss, 'gpu': loss}: the first batch's loss before training, as each side's check measured it."""
    losses = {}
    for r in results.get("benchmarks", []):
        if (r.get("run_type") == "iteration" and not r.get("skipped") and r.get("family") == "mlp"
                and r.get("model") == model and r.get("batch") == batch and r.get("step_variant") == variant
                and r.get("precision", "fp32") == "fp32" and "initial_loss" in r):
            losses.setdefault("cpu" if r.get("device") == "cpu" else "gpu", r["initial_loss"])
    return losses


def mlp_comparison(results, anchors):
    """Markdown lines: per anchor row, offloadbench's eager and graph steps beside PyTorch eager's, the
    speedup over PyTorch, whether the graph beat eager, and the CPU and GPU initial losses."""
    lines = ["| model | batch | step | ours eager µs | ours graph µs | PyTorch eager µs | PyTorch ÷ graph "
             "| graph < eager | loss CPU / GPU |", "|---|---:|---|---:|---:|---:|---:|---|---|"]
    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    for a in anchors.get("rows", []):
        eager = our_step_us(results, a["model"], a["batch"], a["variant"], "eager")
        graph = our_step_us(results, a["model"], a["batch"], a["variant"], "graph")
        speedup = f"{a['median_us'] / graph:.2f}x" if graph else "-"
        faster = "-" if eager is None or graph is None else ("yes" if graph < eager else "**no**")
        losses = initial_losses(results, a["model"], a["batch"], a["variant"])
        loss = " / ".join(f"{losses[k]:.5g}" if k in losses else "-" for k in ("cpu", "gpu"))
        lines.append(f"| {a['model']} | {a['batch']} | {a['variant']} | {fmt(eager)} | {fmt(graph)} "
                     f"| {a['median_us']:.1f} ({a['impl']}) | {speedup} | {faster} | {loss} |")
    return lines


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out")
    p.add_argument("--models", default="784-128-10")
    p.add_argument("--batches", default="1,64,1024,4096")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu only checks this script where there is no GPU (its times are not the CPU anchor: "
                        "scripts/cpu-anchors is)")
    p.add_argument("--results", help="an offloadbench results file of the same GPU: print ours beside PyTorch")
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(f"gpu_anchors: PyTorch is not installed here ({e})", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpu_anchors: PyTorch sees no CUDA GPU", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 as offloadbench's fp32 rows
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    device_name = torch.cuda.get_device_name(0) if args.device == "cuda" else "the CPU (a check of this script)"
    print(f"PyTorch {torch.__version__} on {device_name}; wall us per step, eager, resident data")
    print(f"{'model':<12} {'batch':>5} {'variant':<12} {'median':>9} {'min':>9} {'max':>9}  impl")
    for model_name in args.models.split(","):
        for batch in map(int, args.batches.split(",")):
            for variant in VARIANTS:
                row = mlp_case(torch, model_name, batch, variant, args.repetitions, args.min_time, args.device)
                row.update({"model": model_name, "batch": batch, "variant": variant,
                            "median_us": statistics.median(row["samples_us"])})
                rows.append(row)
                s = row["samples_us"]
                print(f"{model_name:<12} {batch:>5} {variant:<12} {row['median_us']:9.1f} {min(s):9.1f} "
                      f"{max(s):9.1f}  {row['impl']}" + ("" if row.get("validated", True) else "  LOSS DID NOT FALL"))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "gpu": device_name,
                       "timing": "wall us per step after synchronize, eager, resident data", "rows": rows}, f,
                      indent=1)
    if args.results:
        with open(args.results) as f:
            print("\n".join(mlp_comparison(json.load(f), {"rows": rows})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
