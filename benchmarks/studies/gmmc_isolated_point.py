"""Study: the Nystroem factor of GMMC's final fit at 3 x 10^5 and its repair.

Builds the factor that ``GMMC(n_components=100, gamma=2.42, random_state=0)`` builds on the scale
benchmark's two Gaussians (``mmcedu_lab.scale.data("GMMC", n)``) and records the repair of
``mmcedu.gmmc._LowRankMatrix``: the uniform affinity ``tau``, the eigenvalues of
``D^-1/2 K D^-1/2`` clipped at 1, ``lambda_min`` of the reduced matrix and its bottom
eigenvalues, and the point of smallest Nystroem degree with its exact rbf degree. Run it with
the package of the commit to study on ``PYTHONPATH`` (``--label`` names it in the output).

    OMP_NUM_THREADS=1 python benchmarks/studies/gmmc_isolated_point.py --label HEAD \
        --out benchmarks/results/gmmc_isolated_point.jsonl
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from sklearn.utils import check_random_state

from mmcedu.gmmc import _LowRankMatrix
from mmcedu.kernels import nystroem_factor
from mmcedu_lab.scale import data


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=300_000)
    p.add_argument("--gamma", type=float, default=2.4224411151644896)
    p.add_argument("--n-components", type=int, default=100)
    p.add_argument("--label", default="")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    X, _ = data("GMMC", args.n)
    Phi, _ = nystroem_factor(X, args.n_components, gamma=args.gamma, random_state=check_random_state(0))
    d = Phi @ (Phi.T @ np.ones(args.n))
    i = int(np.argmin(d))
    exact = float(np.exp(-args.gamma * ((X - X[i]) ** 2).sum(axis=1)).sum())
    M = _LowRankMatrix(Phi)
    row = {"label": args.label, "n": args.n, "gamma": args.gamma, "n_components": args.n_components,
           "tau": M.tau, "n_clipped": M.n_clipped, "largest_eigenvalue_minus_1": M.clip,
           "lambda_min": M.lambda_min(), "bottom_eigenvalues": [float(v) for v in M.bottom_eigvecs(4)[0]],
           "min_nystroem_degree": float(d[i]), "its_exact_degree": exact,
           "its_nystroem_self_affinity": float(Phi[i] @ Phi[i])}
    print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
