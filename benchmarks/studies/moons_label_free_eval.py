"""Evaluate label-free rules offline from the pickles of moons_label_free.py."""

import glob
import itertools
import os
import pickle
import sys

import numpy as np

from mmcedu.model_selection import _best_index

R_DEFAULT = int(os.environ.get("MOONS_LF_R", "3"))
OUT = "/tmp/moons_lf" + ("" if R_DEFAULT == 3 else f"_R{R_DEFAULT}")


def load(method, task):
    recs = [
        pickle.load(open(p, "rb"))
        for p in sorted(glob.glob(f"{OUT}/{method.replace(' ', '_')}__{task.replace(' ', '_')}__*.pkl"))
    ]
    return sorted(recs, key=lambda r: r["seed"])


def choose(rec, a, b=None, t=0.0):
    """Index chosen by rule 'a > b @ t' as LabelFreeSearch does (None: refuses)."""
    cv = rec["cv"]
    means = cv[f"mean_score_{a}"]
    if not np.isfinite(means).any():
        return None
    full = a not in ("stability", "transfer_stability")
    k = cv["full_n_clusters"] if full or "mean_n_clusters" not in cv else cv["mean_n_clusters"]
    second = None if b is None else cv[f"mean_score_{b}"]
    return _best_index(means, k, t, second)


def ari_of(rec, idx):
    return 0.0 if idx is None else float(np.nan_to_num(rec["aris"][idx]))


def rules(crit, tols=(0.0, 0.02, 0.05, 0.1, 0.2)):
    out = [(a, None, 0.0) for a in crit]
    for a, b in itertools.permutations(crit, 2):
        for t in tols[1:]:
            out.append((a, b, t))
    return out


def name(rule):
    a, b, t = rule
    return a if b is None else f"{a} > {b} @ {t}"


def table(method, task, rule_list=None):
    recs = load(method, task)
    crit = recs[0]["crit"]
    rows = []
    for rule in rule_list or rules(crit):
        try:
            v = np.array([ari_of(r, choose(r, *rule)) for r in recs])
        except KeyError:
            continue
        rows.append((name(rule), v.mean(), v.std(), v))
    best = np.array([np.nanmax(r["aris"]) for r in recs])
    return rows, best


if __name__ == "__main__":
    method, task = sys.argv[1], sys.argv[2]
    rows, best = table(method, task)
    print(f"{method} / {task}: best grid point {best.mean():.3f} +- {best.std():.3f} {best.round(3)}")
    for n, m, s, v in sorted(rows, key=lambda r: -r[1])[: int(sys.argv[3]) if len(sys.argv) > 3 else 25]:
        print(f"  {n:45s} {m:.3f} +- {s:.3f}  {v.round(3)}")
