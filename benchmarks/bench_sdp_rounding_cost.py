"""CPU cost of SDPMMC's randomized rounding relative to the whole fit.

For each solver and n: fit ``SDPMMC(rounding="eigenvector")`` on a standardized set and time
it (CPU seconds, ``time.process_time``), then time ``randomized_rounding`` of the same ``M_``
(``n_hyperplanes=100``, the default) and ``eigenvector_rounding`` alone. The default
``rounding="auto"`` uses the measured ratio: rounding / fit.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_sdp_rounding_cost.py
    python benchmarks/bench_sdp_rounding_cost.py --quick   # small sizes, one set: a smoke test
"""

import argparse
import time
import warnings

from sklearn.preprocessing import StandardScaler

from mmcedu import SDPMMC, datasets
from mmcedu.balance import max_imbalance
from mmcedu.sdp_mmc import eigenvector_rounding, randomized_rounding

CASES = [("cvxpy", 50), ("cvxpy", 100), ("cvxpy", 200),
         ("lowrank", 200), ("lowrank", 500), ("lowrank", 1000)]
QUICK_CASES = [("cvxpy", 30), ("lowrank", 60), ("lowrank", 100)]
SETS = {
    "two_gaussians d=3": lambda n: datasets.two_gaussians(n, distance=3.0, random_state=0),
    "moons noise 0.1": lambda n: datasets.moons(n, noise=0.1, random_state=0),
}


def main(sets=tuple(SETS), cases=tuple(CASES)):
    print("| solver | data | n | fit (eigenvector), CPU s | randomized rounding, CPU s | "
          "eigenvector rounding, CPU s | randomized / fit |")
    print("|---|---|---|---|---|---|---|")
    for solver, n in cases:
        for name in sets:
            X, _ = SETS[name](n)
            X = StandardScaler().fit_transform(X)
            model = SDPMMC(solver=solver, rounding="eigenvector", random_state=0)
            t0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X)
            t_fit = time.process_time() - t0
            l = max_imbalance(n, model.balance)
            t0 = time.process_time()
            randomized_rounding(model.M_, model.kernel_matrix_, model.C, l, random_state=0)
            t_rand = time.process_time() - t0
            t0 = time.process_time()
            eigenvector_rounding(model.M_, l)
            t_eig = time.process_time() - t0
            print(f"| {solver} | {name} | {n} | {t_fit:.2f} | {t_rand:.2f} | {t_eig:.2f} | "
                  f"{t_rand / t_fit:.2f} |", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes on one set")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated set names")
    args = parser.parse_args()
    if args.quick:
        main(("two_gaussians d=3",), QUICK_CASES)
    else:
        main(tuple(args.sets.split(",")), CASES)
