"""SDPMMC(): how tight is the relaxation, and does it tell when SDPMMC is below k-means?

Rule and sets: benchmarks/studies/sdp_mmc_tightness.md. Usage::

    python benchmarks/studies/sdp_mmc_tightness.py chosen-on,held-out,fresh out.csv  # all
    python benchmarks/studies/sdp_mmc_tightness.py chosen-on out.csv
    python benchmarks/studies/sdp_mmc_tightness.py held-out out.csv
    python benchmarks/studies/sdp_mmc_tightness.py fresh out.csv     # part 2
"""

import csv
import sys
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from mmcedu import SDPMMC, datasets
from mmcedu.balance import max_imbalance
from mmcedu.sdp_mmc import randomized_rounding


def sets(which):
    data = {}
    if which == "chosen-on":
        for d in (1, 2, 3, 4, 6):
            data[f"two_gaussians d={d}"] = datasets.two_gaussians(100, distance=d, random_state=0)
        data["two_gaussians d=4 30/70"] = datasets.two_gaussians(
            100, distance=4, weights=(0.3, 0.7), random_state=0)
        data["moons noise 0.1"] = datasets.moons(100, noise=0.1, random_state=0)
        data["two_circles"] = datasets.two_circles(100, random_state=0)
        for a, b in [(0, 1), (4, 9), (3, 8), (2, 3)]:
            data[f"digits {a} vs {b}"] = datasets.digits((a, b), n_per_class=50, random_state=0)
    elif which == "fresh":
        for a, b in [(6, 8), (7, 9), (1, 8), (2, 7), (3, 5)]:
            data[f"digits {a} vs {b}"] = datasets.digits((a, b), n_per_class=50, random_state=2)
        Xw, yw = load_wine(return_X_y=True)
        data["wine 0 vs 2"] = (Xw[yw != 1], yw[yw != 1])
        data["wine 1 vs 2"] = (Xw[yw > 0], yw[yw > 0])
        Xb, yb = load_breast_cancer(return_X_y=True)
        keep = np.sort(np.random.RandomState(1).choice(len(yb), 150, replace=False))
        data["breast cancer (150, seed 1)"] = (Xb[keep], yb[keep])
        data["two_gaussians d=3.5"] = datasets.two_gaussians(100, distance=3.5, random_state=2)
        data["two_gaussians d=4 40/60"] = datasets.two_gaussians(
            100, distance=4, weights=(0.4, 0.6), random_state=2)
        data["moons noise 0.15"] = datasets.moons(100, noise=0.15, random_state=2)
        data["two_circles noise 0.1"] = datasets.two_circles(100, noise=0.1, random_state=2)
    else:
        Xi, yi = load_iris(return_X_y=True)
        data["iris"] = (Xi, yi)
        data["iris versicolor vs virginica"] = (Xi[yi > 0], yi[yi > 0])
        Xw, yw = load_wine(return_X_y=True)
        data["wine 0 vs 1"] = (Xw[yw < 2], yw[yw < 2])
        Xb, yb = load_breast_cancer(return_X_y=True)
        keep = np.sort(np.random.RandomState(0).choice(len(yb), 150, replace=False))
        data["breast cancer (150)"] = (Xb[keep], yb[keep])
        for a, b in [(1, 7), (5, 9), (0, 6)]:
            data[f"digits {a} vs {b}"] = datasets.digits((a, b), n_per_class=50, random_state=1)
        data["moons noise 0.2"] = datasets.moons(100, noise=0.2, random_state=1)
        for d in (2.5, 5):
            data[f"two_gaussians d={d}"] = datasets.two_gaussians(100, distance=d, random_state=1)
    return {k: (StandardScaler().fit_transform(X), y) for k, (X, y) in data.items()}


def main(groups, out):
    cols = ["group", "data", "n", "ari", "kmeans_ari", "kmeans_sd", "gw_ari", "r1", "r2",
            "rel_gap", "objective", "labeling_objective", "omega_gw", "gw_seconds", "gw_ari_mean",
            "gw_ari_sd", "sizes", "balance_decided", "status", "seconds", "warnings"]
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for which, name, (X, y) in [(g, k, v) for g in groups for k, v in sets(g).items()]:
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                m = SDPMMC(rounding="eigenvector", random_state=0).fit(X)  # the default when measured
            sec = time.perf_counter() - t0
            km = [adjusted_rand_score(y, KMeans(2, n_init=10, random_state=s).fit(X).labels_)
                  for s in range(5)]
            lam = np.linalg.eigvalsh(m.M_)[::-1]
            n = len(X)
            t1 = time.perf_counter()
            y_gw, omega_gw = randomized_rounding(m.M_, m.kernel_matrix_, m.C, max_imbalance(n, m.balance),
                                          random_state=0)
            gw_sec = time.perf_counter() - t1
            gw5 = [adjusted_rand_score(y, randomized_rounding(
                m.M_, m.kernel_matrix_, m.C, max_imbalance(n, m.balance), random_state=s)[0])
                for s in range(5)]  # seeds 0..4 of the hyperplanes, the same M_
            rel = (m.labeling_objective_ - m.objective_) / m.labeling_objective_
            sizes = "/".join(str(int(c)) for c in sorted(np.bincount(m.labels_, minlength=2)))
            row = [which, name, n, adjusted_rand_score(y, m.labels_), np.mean(km), np.std(km),
                   adjusted_rand_score(y, y_gw), lam[0] / np.trace(m.M_), lam[1] / np.trace(m.M_),
                   rel, m.objective_, m.labeling_objective_, omega_gw, gw_sec, np.mean(gw5),
                   np.std(gw5), sizes, m.balance_decided_,
                   m.solver_info_.get("status"), sec,
                   " ".join(sorted({x.category.__name__ for x in ws}))]
            w.writerow([f"{v:.4f}" if isinstance(v, float) else v for v in row])
            fh.flush()
            print(*[f"{v:.3f}" if isinstance(v, float) else v for v in row], flush=True)


if __name__ == "__main__":
    main(sys.argv[1].split(","), sys.argv[2])
