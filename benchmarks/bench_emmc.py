"""Benchmark EMMC: fit time vs n and vs L, and the primal / dual ridge forms, in one run.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_emmc.py          # full sizes (about a minute)
    OMP_NUM_THREADS=1 python benchmarks/bench_emmc.py --quick  # small sizes (seconds)

Prints ratios rather than absolute claims: time relative to the smallest size (with the
log-log slope between the two largest sizes), time per alternation (the number of
alternations varies with the data), and dual / primal time for one factorization + solve.
The ELM ridge system is L x L in the primal form and n x n in the dual form, so the primal
form should win when L < n and the dual form when L > n (``form="auto"`` picks the smaller).
"""

from __future__ import annotations

import argparse
import math

from mmcedu.experiments.emmc import timing_study


def _scaling(rows, name):
    base = rows[0][1]
    print(f"{name:>6}  fit s      x smallest  s / alternation")
    for size, t, per in rows:
        print(f"{size:>6}  {t:9.4f}  {t / base:10.2f}  {per:10.5f}")
    (s1, t1, p1), (s2, t2, p2) = rows[-2], rows[-1]
    slope = math.log(p2 / p1) / math.log(s2 / s1)
    print(f"log-log slope of time per alternation between {name}={s1} and {s2}: {slope:.2f}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args(argv)
    if args.quick:
        res = timing_study(ns=(200, 400, 800), Ls=(50, 100, 200, 400), n_fixed=400,
                           form_cases=((800, 100), (100, 800)), repeats=2)
    else:
        res = timing_study(ns=(250, 500, 1000, 2000, 4000), Ls=(50, 100, 200, 400, 800, 1600),
                           n_fixed=1000, form_cases=((2000, 100), (2000, 500), (500, 2000),
                                                     (100, 2000)), repeats=5)
    print("EMMC fit time vs n (L fixed)")
    _scaling(res["n"], "n")
    print("EMMC fit time vs L (n fixed)")
    _scaling(res["L"], "L")
    print("Ridge output weights: one factorization + solve")
    print("     n      L  primal s    dual s    dual/primal  auto picks")
    for n, L, tp, td, ratio, auto in res["forms"]:
        print(f"{n:>6} {L:>6}  {tp:8.4f}  {td:8.4f}  {ratio:11.3f}  {auto}")
        faster = "primal" if tp < td else "dual"
        if faster != auto:
            print("        (auto's choice was not the faster one here: timings are noisy)")
    return res


if __name__ == "__main__":
    main()
