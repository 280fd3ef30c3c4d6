"""A nightly results tree as ci/nightly-gpu.yml keeps it, made from real results files: 3 machines x 30
nights (two GPU machines from the H100 reference run, one CPU-only machine from tests/data), 1% night-to-
night noise, and steps injected at known nights into known benchmarks, with an A/B verdict and a baseline
for some machines. The tests check that the dashboard shows exactly these steps, where they were put.

    history/<machine>/<UTC stamp>-<sha>.json, ab/<machine>/<stamp>-<sha>.json, baselines/<machine>.sha
"""

import copy
import dataclasses
import hashlib
import json
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parents[2]
H100_RUN = ROOT / "results" / "reference" / "nvidia-h100-80gb-hbm3-2026-11-26-quick.json"
CPU_RUN = ROOT / "tests" / "data" / "quick_cpu_reps10.json"
NIGHTS = 30
PER_FAMILY = 5  # benchmarks kept per family: the tree stays small and the dashboard quick to build


@dataclasses.dataclass
class Step:
    benchmark: str
    night: int  # first night at the new level
    factor: float  # real_time multiplied by this from that night on

    @property
    def verdict(self):
        return "SLOWER" if self.factor > 1 else "FASTER"


@dataclasses.dataclass
class Machine:
    name: str  # the folder name: the fingerprint id, as the nightly workflow names it
    doc: dict  # the one real run every night is made from
    steps: list  # Step, in time order per benchmark
    ab_slower: list = (
        None  # benchmarks the newest A/B calls SLOWER; None: no A/B file for this machine
    )
    baseline_night: int = None

    def benchmarks(self):
        return list(
            dict.fromkeys(r["name"] for r in self.doc["benchmarks"] if r["run_type"] == "iteration")
        )

    def open_regressions(self):
        """Benchmarks whose last injected step is a slowdown, with the night it started."""
        last = {}
        for step in self.steps:
            last[step.benchmark] = step
        return {(name, s.night) for name, s in last.items() if s.verdict == "SLOWER"}


def commit(night):
    return hashlib.sha1(f"night {night}".encode()).hexdigest()[:12]


def stamp(night):
    return f"2026-10-{night + 1:02}T02:17:00Z"


def trimmed(doc, per_family):
    """The run with only the first `per_family` measured benchmarks of each family (their rows only)."""
    keep, count = set(), {}
    for row in doc["benchmarks"]:
        family = row["name"].split("/", 1)[0]
        if (
            row["run_type"] == "iteration"
            and not row.get("skipped")
            and row["name"] not in keep
            and count.get(family, 0) < per_family
        ):
            keep.add(row["name"])
            count[family] = count.get(family, 0) + 1
    out = {k: v for k, v in doc.items() if k not in ("benchmarks", "analysis")}
    out["benchmarks"] = [
        r for r in doc["benchmarks"] if r["run_type"] == "iteration" and r["name"] in keep
    ]
    return out


def as_other_gpu_machine(doc):
    """The same rows as from a second machine: another GPU, driver, link and fingerprint."""
    doc = copy.deepcopy(doc)
    context = doc["context"]
    gpu = context["cuda"]["gpus"][0]
    gpu["name"] = "NVIDIA L40S"
    gpu["pcie_link"].update(
        current_generation=4,
        max_generation=4,
        ceiling_generation=4,
        theoretical_bytes_per_second=31.5e9,
        ceiling_bytes_per_second=31.5e9,
    )
    context["cuda"]["driver_release"] = "570.86.15"
    context["machine_fingerprint"].update(
        id="5ca1ab1e0c0ffee0", gpu_models=["NVIDIA L40S"], driver="570.86.15"
    )
    context["host"]["hostname"] = "runner-l40s"
    return doc


def machines():
    h100 = trimmed(json.loads(H100_RUN.read_text()), PER_FAMILY)
    l40s = as_other_gpu_machine(h100)
    cpu = trimmed(json.loads(CPU_RUN.read_text()), 8)
    names = lambda doc, family: [
        n for n in Machine("", doc, []).benchmarks() if n.startswith(family + "/")
    ]
    return [
        Machine(
            h100["context"]["machine_fingerprint"]["id"],
            h100,
            [Step(names(h100, "transfer")[1], 17, 1.25), Step(names(h100, "compute")[0], 8, 0.8)],
            ab_slower=[names(h100, "transfer")[1]],
            baseline_night=16,
        ),
        Machine(
            l40s["context"]["machine_fingerprint"]["id"],
            l40s,
            [
                Step(names(l40s, "mlp")[2], 10, 1.3),
                Step(names(l40s, "mlp")[2], 20, 1 / 1.3),  # fixed again
                Step(names(l40s, "streams")[0], 24, 1.15),
            ],
        ),
        Machine(
            cpu["context"]["machine_fingerprint"]["id"],
            cpu,
            [Step(names(cpu, "transfer")[3], 12, 1.2)],
            ab_slower=[],
            baseline_night=29,
        ),
    ]


def night_of(machine, night, rng):
    doc = copy.deepcopy(machine.doc)
    ob = doc["context"]["offloadbench"]
    ob.update(
        git_sha=commit(night),
        start_time_utc=stamp(night),
        end_time_utc=stamp(night),
        incomplete=False,
    )
    noise = {name: rng.gauss(1.0, 0.01) for name in machine.benchmarks()}
    for row in doc["benchmarks"]:
        factor = noise[row["name"]]
        for step in machine.steps:
            if step.benchmark == row["name"] and night >= step.night:
                factor *= step.factor
        row["real_time"] *= factor
        row["cpu_time"] *= factor
    return doc


def ab_verdict(machine, night):
    rows = [
        {
            "name": name,
            "gpu": "gpu" in name,
            "verdict": "SLOWER" if name in machine.ab_slower else "SAME",
            "change": 0.25 if name in machine.ab_slower else 0.0,
            "interval_low": 0.2 if name in machine.ab_slower else -0.01,
            "interval_high": 0.3 if name in machine.ab_slower else 0.01,
            "reason": "",
        }
        for name in machine.benchmarks()
    ]
    counts = {
        v: sum(r["verdict"] == v for r in rows)
        for v in ("SLOWER", "FASTER", "SAME", "INCONCLUSIVE")
    }
    return {
        "ab_schema_version": 1,
        "context": {"start_time_utc": stamp(night)},
        "counts": counts,
        "benchmarks": rows,
    }


def write_tree(root, seed=37):
    """Writes the tree under `root`; returns the machines (what was injected where)."""
    rng = random.Random(seed)
    made = machines()
    for machine in made:
        history = root / "history" / machine.name
        history.mkdir(parents=True)
        for night in range(NIGHTS):
            name = f"{stamp(night).replace('-', '').replace(':', '')}-{commit(night)}.json"
            (history / name).write_text(json.dumps(night_of(machine, night, rng)))
        if machine.ab_slower is not None:
            (root / "ab" / machine.name).mkdir(parents=True)
            (root / "ab" / machine.name / name).write_text(
                json.dumps(ab_verdict(machine, NIGHTS - 1))
            )
        if machine.baseline_night is not None:
            (root / "baselines").mkdir(exist_ok=True)
            (root / "baselines" / f"{machine.name}.sha").write_text(
                commit(machine.baseline_night) + "\n"
            )
    return made
