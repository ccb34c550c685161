"""SDP MMC's label-free tolerance (``SDPMMC._label_free_tolerance``) chosen on held-out tasks.

Pre-registered in ``benchmarks/results/sdp_tolerance_heldout.md`` (candidate tolerances, tasks,
seeds, selection rule). Every (task, seed) runs the comparison's SDP MMC search once
(``METHODS["SDP MMC"]``: ``SDPMMC(rounding="eigenvector", random_state=seed)`` with its own rule,
``transfer_stability`` over the 8 widths of ``label_free_rule``, 6 resamples as in the full
protocol, ``refit=False``) and fits every grid width on all of ``X`` for the ARI of every grid
point, as ``mmcedu_lab.comparison._run`` does (SDP MMC's criterion needs no full-data fit, so the
search keeps no ``full_labels_``). LabelFreeSearch's rule (``_best_index``) is then applied
offline to the search's per-grid-point mean transfer stabilities for every tolerance; tolerance
0 must reproduce the search's own ``best_index_``.

The scale condition of the rule needs the per-grid-point scores of the scale benchmark's SDP MMC
searches: five are in ``benchmarks/results/label_free_stability.jsonl``; the benchmark's own
two (search seed 0 at n = 10^4 and 10^5, rows of ``label_free_scale.csv``) are counted from the
scores the CSV records since its rerun with the adopted tolerance (before it, from their recorded
choices and quoted scores: the amendment), or recomputed (``--scale``: the search without its
final fit, as ``label_free_stability.py --only SDPMMC`` makes it).

One JSON line per (task, seed) and per recomputed scale search is appended to ``--out``; the
pairs already there are skipped, so a run can be stopped and resumed.

Usage (from the repository, ``PYTHONPATH=$PWD:$PWD/lab``):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/studies/sdp_tolerance_heldout.py \
        --scale --out /tmp/sdp_tolerance_heldout.jsonl        # the whole study, resumable
    python benchmarks/studies/sdp_tolerance_heldout.py --tasks "moons (noise 0.15)" --seeds 100
    python benchmarks/studies/sdp_tolerance_heldout.py --report /tmp/sdp_tolerance_heldout.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.preprocessing import StandardScaler

import mmcedu.model_selection as MS
from mmcedu.metrics import adjusted_rand_score
from mmcedu_lab import comparison as C

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
STABILITY = RESULTS / "label_free_stability.jsonl"

TOLERANCES = (0.0, 0.0025, 0.005, 0.01, 0.02)
SEEDS = (100, 101, 102)
#: the seeds the decision is taken on (the amendment of the pre-registration: seed 100 alone;
#: 101 and 102 are an addendum that does not change this release's decision)
DECISION_SEEDS = (100,)
TIE = 0.005  # mean gaps within this of the smallest are tied
N_RESAMPLES = 6  # the full protocol's (run_comparison(full=True)), the only one SDP MMC runs in
METHOD = "SDP MMC"
#: the scale benchmark's searches recorded without per-grid-point scores (label_free_scale.csv)
SCALE_RECOMPUTE = ((10**4, 0), (10**5, 0))
#: their choices per tolerance as the amendment counts them without a recomputation: 10^5 chose
#: index 0 (the best and the first, so 0 at every tolerance); 10^4 chose 1, and its quoted scores
#: (0.993, 0.994, 0.994, 0.992) put index 0 within 0.002 of the best (0 at every t >= 0.0025)
SCALE_RECORDED = {(10**4, 0): {t: (1 if t == 0 else 0) for t in TOLERANCES},
                  (10**5, 0): {t: 0 for t in TOLERANCES}}


# the ten held-out tasks of gmmc_guard_heldout.py, taken from it (the same data by construction)
sys.path.insert(0, str(HERE))
from gmmc_guard_heldout import TASKS  # noqa: E402

assert not set(TASKS) & set(C.TASKS)


def choices(means, n_clusters):
    """``{tolerance: grid index}`` by LabelFreeSearch's rule; ``None`` when nothing is eligible."""
    means = np.asarray(means, dtype=float)
    if not np.isfinite(means).any():
        return {t: None for t in TOLERANCES}
    return {t: MS._best_index(means, n_clusters, t) for t in TOLERANCES}


def run_one(task, seed):
    """One (task, seed): the search, every grid point's full-data fit, the choice per tolerance."""
    X, y = TASKS[task](seed)
    keep = X.std(axis=0) > 0
    X = StandardScaler().fit_transform(np.asarray(X, dtype=float)[:, keep])
    y = np.unique(y, return_inverse=True)[1]
    est, grid, criterion, tolerance = C.METHODS[METHOD].setup(X, 2, seed)
    assert list(criterion) == ["transfer_stability"] and tolerance in TOLERANCES, (criterion, tolerance)
    params = [{"gamma": float(g)} for g in grid["gamma"]]
    # the comparison's call for an mmcedu method: no grid, no criterion (the estimator's rule)
    s = C._Search(est, n_resamples=N_RESAMPLES, random_state=seed, refit=False, n_jobs=1)
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            s.fit(X)
            own = int(s.best_index_)
            res = s.cv_results_
            fit_s = np.asarray(res["mean_fit_time"], dtype=float) * N_RESAMPLES
            means = np.asarray(res["mean_score"], dtype=float)
            counts = np.asarray(res["mean_n_clusters"], dtype=float)
            searched = [float(p["gamma"]) for p in res["params"]]
            assert np.allclose(searched, [p["gamma"] for p in params]), (searched, params)
        except ValueError:  # no eligible grid point: the search refuses (ARI 0, as in the comparison)
            own, means, counts = None, np.full(len(params), -np.inf), np.full(len(params), np.nan)
            fit_s = np.full(len(params), np.nan)
        search_s, search_cpu = time.perf_counter() - t0, time.process_time() - c0
        t1, c1 = time.perf_counter(), time.process_time()
        labels = getattr(s, "full_labels_", None)  # None for SDP MMC: no full-data criterion
        full_fit_s = []
        if labels is None:  # as the comparison does: every grid point fitted to all the data
            labels = []
            for p in params:
                t2 = time.perf_counter()
                labels.append(C._fit_labels(clone(est).set_params(**p), X))
                full_fit_s.append(round(time.perf_counter() - t2, 2))
        full_s, full_cpu = time.perf_counter() - t1, time.process_time() - c1
    aris = [float(adjusted_rand_score(y, lab)) for lab in labels]
    chosen = choices(means, counts)
    # the package's tolerance gives the search's own choice (a check of the offline rule)
    assert chosen[tolerance] == own, (task, seed, tolerance, chosen[tolerance], own)
    return {
        "kind": "heldout", "task": task, "seed": seed, "n": len(y), "n_resamples": N_RESAMPLES,
        "gammas": [p["gamma"] for p in params], "scores": means.tolist(),
        "n_clusters": counts.tolist(), "aris": aris,
        "full_n_clusters": [int(MS.n_clusters_of(lab)) for lab in labels],
        "search_best_index": own, "search_tolerance": tolerance, "tolerances": list(TOLERANCES),
        "chosen": [chosen[t] for t in TOLERANCES],
        "search_fit_s": np.round(fit_s, 2).tolist(), "full_fit_s": full_fit_s,
        "search_s": round(search_s, 2), "full_fits_s": round(full_s, 2),
        "seconds": round(search_s + full_s, 2), "cpu_s": round(search_cpu + full_cpu, 2),
    }


def run_scale(n, seed):
    """The scale benchmark's SDP MMC search at ``n`` with search seed ``seed``, without its final
    fit (what ``label_free_stability.py --only SDPMMC`` runs), with its per-grid-point scores."""
    sys.path.insert(0, str(HERE.parent))
    from bench_label_free_scale import ESTIMATORS

    from mmcedu import SDPMMC  # noqa: F401  (the constructor source names it)
    from mmcedu_lab.scale import data

    X, _ = data("SDPMMC", n)
    est = eval(ESTIMATORS["SDPMMC"][0])  # noqa: S307 - the benchmark's own constructor source
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = MS.LabelFreeSearch(est, random_state=seed, n_jobs=1, refit=False).fit(X)
    res = s.cv_results_
    return {
        "kind": "scale", "n": n, "seed": seed, "constructor": ESTIMATORS["SDPMMC"][0],
        "best_index": int(s.best_index_), "criteria": s.criteria_,
        "scores": np.asarray(res["mean_score"], dtype=float).tolist(),
        "n_clusters": np.asarray(res["mean_n_clusters"], dtype=float).tolist(),
        "n_choice_samples": int(s.n_choice_samples_),
        "seconds": round(time.perf_counter() - t0, 1), "cpu_s": round(time.process_time() - c0, 1),
    }


# ------------------------------------------------------------------------------------------
# The report
# ------------------------------------------------------------------------------------------
def read(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def scale_searches(records):
    """Every recorded SDP MMC search of the scale benchmark with per-grid-point scores.

    Returns a list of dicts: ``source``, ``n``, ``seed``, ``recorded`` (the choice recorded by
    the search), ``chosen`` (per tolerance), ``counted`` (the scale condition uses it), ``note``.
    The jsonl keeps the mean transfer stabilities rounded to 4 decimals and no cluster counts;
    every SDP MMC fit has two clusters (the balance bound), so the counts are taken as 2.
    """
    out = []
    for r in read(STABILITY):
        if r.get("estimator") != "SDPMMC" or "scores" not in r:
            continue
        means = r["scores"]["transfer_stability"]
        ch = choices(means, np.full(len(means), 2.0))
        out.append({"source": "label_free_stability.jsonl", "n": r["n"], "seed": r["seed"],
                    "recorded": r["best_index"], "chosen": ch, "counted": True,
                    "note": "" if ch[0.0] == r["best_index"] else "tolerance 0 differs from the "
                    "recorded choice (4-decimal rounding)"})
    from mmcedu_lab.scale import rows

    # the benchmark's rows are its searches with seed 0; a run that recorded its scores (the
    # rerun with tolerance 0.01) is counted from them if they give its own choice at the tolerance
    # it ran with and, at tolerance 0, the choice the previous run recorded (the same search)
    csv_rows = {(10**4, 0): 1, (10**5, 0): 0}  # the choices at tolerance 0 (the run of 4deb036)
    csv_scored = {(r["n"], 0): r for r in rows("SDPMMC") if r.get("scores")}
    for key, r in csv_scored.items():
        means = r["scores"]["transfer_stability"]
        ch = choices(means, r["grid_n_clusters"]["mean_n_clusters"])
        ok = ch[r["tolerance"]] == r["best_index"] and ch[0.0] == csv_rows.get(key)
        out.append({"source": f"label_free_scale.csv (run at tolerance {r['tolerance']:g}), its scores",
                    "n": key[0], "seed": 0, "recorded": r["best_index"], "chosen": ch, "counted": ok,
                    "note": "" if ok else "its scores do not give its own choice, or at tolerance 0 "
                    "the previous run's"})
    recomputed = {(r["n"], r["seed"]): r for r in records if r.get("kind") == "scale"}
    for key in SCALE_RECOMPUTE:
        n, seed = key
        if key in csv_scored:
            continue
        csv_choice = csv_rows.get(key)
        r = recomputed.get(key)
        if r is None:  # counted from the recorded choice and quoted scores (the amendment)
            ch = SCALE_RECORDED[key]
            ok = ch[0.0] == csv_choice
            out.append({"source": "label_free_scale.csv, recorded choice and quoted scores",
                        "n": n, "seed": seed, "recorded": csv_choice, "chosen": ch, "counted": ok,
                        "note": "" if ok else "the CSV's choice is not the recorded one"})
            continue
        ch = choices(r["scores"], r["n_clusters"])
        ok = ch[0.0] == csv_choice
        out.append({"source": "label_free_scale.csv, recomputed", "n": n, "seed": seed,
                    "recorded": csv_choice, "chosen": ch, "counted": ok,
                    "note": "" if ok else f"recomputed search chose {ch[0.0]}, not the CSV's "
                    f"{csv_choice}: not counted"})
    return out


def report(records, seeds=DECISION_SEEDS):
    """``(markdown, chosen tolerance or None)``: the rule applied to the runs of ``seeds``."""
    SEEDS = tuple(seeds)
    held = [r for r in records if r.get("kind") == "heldout" and r["seed"] in SEEDS]
    by = {(r["task"], r["seed"]): r for r in held}
    tasks = [t for t in TASKS if any((t, s) in by for s in SEEDS)]
    complete = all((t, s) in by for t in TASKS for s in SEEDS)
    lines = []

    def ari(r, t):
        i = r["chosen"][r["tolerances"].index(t)]
        return 0.0 if i is None else float(np.nan_to_num(r["aris"][i]))

    def cell(v):
        if len(v) == 1:  # one seed: no spread to show
            return f"{v[0]:.3f}"
        return f"{np.mean(v):.3f} ± {np.std(v):.3f}" if len(v) else ""

    gaps = {}
    if tasks:
        rows = []
        best = {t: np.array([np.nanmax(by[t, s]["aris"]) for s in SEEDS if (t, s) in by])
                for t in tasks}
        rows.append(["best grid point (oracle)"] + [cell(best[t]) for t in tasks] + ["0", ""])
        for tol in TOLERANCES:
            vals = {t: np.array([ari(by[t, s], tol) for s in SEEDS if (t, s) in by]) for t in tasks}
            gaps[tol] = float(np.mean([np.mean(best[t] - vals[t]) for t in tasks]))
            moved = sum(r["chosen"][r["tolerances"].index(tol)] != r["chosen"][0] for r in held)
            rows.append([f"transfer stability, tolerance {tol:g}"] + [cell(vals[t]) for t in tasks]
                        + [f"{gaps[tol]:.4f}", f"{moved} of {len(held)}"])
        lines.append("Cells: label-free ARI of SDP MMC's choice (mean ± sd over the seeds "
                     f"{', '.join(map(str, SEEDS))} when more than one); mean gap: mean over the tasks "
                     "of the mean gap to the best grid point; moved: runs whose choice differs from "
                     "tolerance 0.")
        lines.append("")
        lines.append("| rule | " + " | ".join(tasks) + " | mean gap | moved |")
        lines.append("|---" * (len(tasks) + 3) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("")
        secs = {t: [by[t, s]["seconds"] for s in SEEDS if (t, s) in by] for t in tasks}
        cpus = {t: [by[t, s]["cpu_s"] for s in SEEDS if (t, s) in by] for t in tasks}
        lines.append("Wall (CPU) seconds per task, search and 8 full-data fits, summed over its seeds: "
                     + ", ".join(f"{t} {sum(secs[t]):.0f} ({sum(cpus[t]):.0f})" for t in tasks))
        lines.append("")
        lines.append("Per run (task, seed: best grid point ARI; chosen index and its ARI per tolerance; "
                     "mean transfer stability per grid index):")
        lines.append("")
        lines.append("```")
        for r in held:
            ch = ", ".join(f"{t:g}: {i} ({ari(r, t):.3f})" for t, i in zip(r["tolerances"], r["chosen"]))
            sc = " ".join(f"{v:.4f}" for v in r["scores"])
            lines.append(f"{r['task']} {r['seed']}: best {np.nanmax(r['aris']):.3f}; {ch}; [{sc}]; "
                         f"{r['seconds']:.1f} s")
        lines.append("```")
    else:
        lines.append("No held-out record yet.")
    lines.append("")
    # the scale benchmark's searches
    scale = scale_searches(records)
    lines.append("Scale benchmark (two Gaussians, `SDPMMC(n_components=200)`): chosen grid index per "
                 "tolerance, per recorded search")
    lines.append("")
    lines.append("| search | n | seed | recorded choice | "
                 + " | ".join(f"tolerance {t:g}" for t in TOLERANCES) + " | counted |")
    lines.append("|---" * (len(TOLERANCES) + 5) + "|")
    for s in scale:
        cells = ["" if s["chosen"] is None else str(s["chosen"][t]) for t in TOLERANCES]
        note = ("yes" if s["counted"] else "no") + (f" ({s['note']})" if s["note"] else "")
        lines.append(f"| {s['source']} | {s['n']:,} | {s['seed']} | {s['recorded']} | "
                     + " | ".join(cells) + f" | {note} |")
    counted = [s for s in scale if s["counted"]]
    stable = {t: len({s["chosen"][t] for s in counted}) == 1 for t in TOLERANCES}
    lines.append("")
    lines.append(f"Counted searches: {len(counted)} of {len(scale)}. One grid point in every counted "
                 "search: " + ", ".join(f"{t:g} {'yes' if stable[t] else 'no'}" for t in TOLERANCES))
    lines.append("")
    all_counted = len(counted) == len(scale)
    if not (complete and gaps):
        missing = sum((t, s) not in by for t in TASKS for s in SEEDS)
        lines.append(f"No choice: {missing} of {len(TASKS) * len(SEEDS)} (task, seed) runs missing.")
        return "\n".join(lines), None
    smallest = min(gaps.values())
    tied = [t for t in TOLERANCES if gaps[t] <= smallest + TIE]
    largest = max(tied)
    choice = largest if stable[largest] else min(tied)
    lines.append(f"Tied (mean gap within {TIE} of the smallest, {smallest:.4f}): "
                 + ", ".join(f"{t:g}" for t in tied) + f". Largest tied: {largest:g}, scale condition "
                 + ("met" if stable[largest] else "not met")
                 + ("" if all_counted else f" (on {len(counted)} of {len(scale)} searches)") + ".")
    lines.append("")
    lines.append(f"Chosen tolerance (pre-registered rule): {choice:g}")
    return "\n".join(lines), choice


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/sdp_tolerance_heldout.jsonl",
                    help="JSON lines, appended; (task, seed) pairs already there are skipped")
    ap.add_argument("--tasks", nargs="+", default=None, choices=list(TASKS))
    ap.add_argument("--seeds", nargs="+", type=int, default=None)
    ap.add_argument("--scale", action="store_true",
                    help="also recompute the scale benchmark's two seed-0 searches (10^4, 10^5)")
    ap.add_argument("--report", metavar="FILE", default=None,
                    help="print the Markdown report of FILE's records and run nothing")
    args = ap.parse_args(argv)
    if args.report:
        print(full_report(read(args.report)))
        return
    done = read(args.out)
    have = {(r["task"], r["seed"]) for r in done if r.get("kind") == "heldout"}
    have_scale = {(r["n"], r["seed"]) for r in done if r.get("kind") == "scale"}
    for task in args.tasks or list(TASKS):
        for seed in args.seeds or list(SEEDS):
            if (task, seed) in have:
                continue
            r = run_one(task, seed)
            with open(args.out, "a") as f:
                f.write(json.dumps(r) + "\n")
            print(task, seed, "best", round(np.nanmax(r["aris"]), 3), "chosen (ARI) per tolerance",
                  {t: (i, None if i is None else round(r["aris"][i], 3))
                   for t, i in zip(TOLERANCES, r["chosen"])},
                  f"{r['seconds']:.1f} s ({r['cpu_s']:.1f} CPU s)", flush=True)
    if args.scale:
        for n, seed in SCALE_RECOMPUTE:
            if (n, seed) in have_scale:
                continue
            r = run_scale(n, seed)
            with open(args.out, "a") as f:
                f.write(json.dumps(r) + "\n")
            print("scale", n, seed, "best_index", r["best_index"], [round(v, 4) for v in r["scores"]],
                  f"{r['seconds']:.1f} s", flush=True)
    print(full_report(read(args.out)))


def full_report(records):
    """The decision (seed 100) and the addendum (every seed with records)."""
    text, _ = report(records)
    seeds = sorted({r["seed"] for r in records if r.get("kind") == "heldout"})
    if len(seeds) > 1:
        add, choice = report(records, seeds)
        text += ("\n\n## Addendum: every seed with records (" + ", ".join(map(str, seeds))
                 + "); not this release's decision\n\n" + add)
    return text


if __name__ == "__main__":
    main()
