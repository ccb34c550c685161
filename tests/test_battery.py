"""The held-out battery (mmcedu_lab.battery): the table, the loader, the published ARIs."""

import collections

import numpy as np
import pytest

from mmcedu_lab import battery as bt

try:
    bt.data_dir()
    HAVE_DATA = True
except FileNotFoundError:
    HAVE_DATA = False

needs_data = pytest.mark.skipif(
    not HAVE_DATA, reason=f"the battery's files are not here (set ${bt.DATA_ENV} or see mmcedu_lab.battery)"
)
KEYS = [(s.battery, s.name) for s in bt.BATTERY]


def test_table_is_the_selection():
    assert len(KEYS) == len(set(KEYS)) == 45
    assert KEYS == sorted(KEYS)
    per_battery = collections.Counter(s.battery for s in bt.BATTERY)
    assert per_battery == {"fcps": 8, "graves": 10, "other": 3, "sipu": 7, "uci": 6, "wut": 11}
    for s in bt.BATTERY:
        assert s.n <= 1100 and 2 <= s.k <= 15 and s.d >= 2 and 0 <= s.n_noise < s.n
    assert {(s.battery, s.name) for s in bt.BATTERY if s.seen} == {
        ("other", "iris"),
        ("other", "iris5"),
        ("uci", "wdbc"),
        ("uci", "wine"),
    }
    assert len(bt.HELD_OUT) == 41


def test_ari_without_noise_drops_noise_points():
    y = np.array([0, 0, 1, 1, -1, -1])
    assert bt.ari_without_noise(y, [5, 5, 7, 7, 5, 7]) == 1.0
    assert bt.ari_without_noise(y, [5, 5, 7, 7, 9, 9]) == 1.0
    assert bt.ari_without_noise(y, [5, 7, 5, 7, 5, 5]) < 0.5
    with pytest.raises(ValueError, match="one length"):
        bt.ari_without_noise(y, [0, 1])
    with pytest.raises(ValueError, match="noise"):
        bt.ari_without_noise([-1, -1], [0, 1])


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="Unknown battery set"):
        bt.load_battery("sipu", "birch1")
    if HAVE_DATA:
        with pytest.raises(ValueError, match="No published results"):
            bt.published_ari("DBSCAN")
        with pytest.raises(ValueError, match="preprocess"):
            bt.published_ari("Genie", preprocess="robust")


@needs_data
@pytest.mark.parametrize("key", KEYS, ids=[f"{b}/{n}" for b, n in KEYS])
def test_every_set_loads_as_the_table_says(key):
    s = bt._BY_KEY[key]
    X_raw, y_raw, k_raw = bt.load_battery(*key, standardize=False)
    X, y, k = bt.load_battery(*key)
    assert X_raw.shape == (s.n, s.d) and X_raw.dtype == float and np.isfinite(X_raw).all()
    constant = int((X_raw.std(axis=0) == 0).sum())
    assert constant == (1 if key == ("uci", "ionosphere") else 0)
    assert X.shape == (s.n, s.d - constant)
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(X.std(axis=0), 1, atol=1e-9)
    assert k == k_raw == s.k
    np.testing.assert_array_equal(y, y_raw)
    assert y.shape == (s.n,) and y.dtype.kind == "i"
    assert int((y == -1).sum()) == s.n_noise
    assert set(np.unique(y[y != -1])) == set(range(k))  # no empty reference cluster


@needs_data
def test_published_csv_covers_every_set():
    for method in bt.METHOD_NAMES:
        assert set(bt.published_ari(method)) == set(KEYS), method
    for method in ("Genie", "ITM", "k-means"):
        assert set(bt.published_ari(method, preprocess="scale_standard")) == set(KEYS), method
    every = bt.published_ari()
    assert all(-0.5 <= a <= 1.0 for a in every.values())
    assert len({m for _, _, m in every}) == 18  # Genie x5, ITM, k-means, GMM, spectral x10
    assert bt.published_ari("Genie")[("fcps", "hepta")] == 1.0


@needs_data
@pytest.mark.parametrize("key", [("wut", "x2"), ("sipu", "pathbased"), ("uci", "wine")])
def test_genie_reproduces_the_published_values(key):
    """The framework ran Genie (genieclust 1.0.0, gini 0.3) on its "original" space: the data
    centred and scaled by one common factor, a 1e-6 jitter. Genie is invariant to that
    scaling, so raw data compare with ``original``, standardized data with ``scale_standard``."""
    genieclust = pytest.importorskip("genieclust")
    X_raw, y, k = bt.load_battery(*key, standardize=False)
    X, _, _ = bt.load_battery(*key)
    raw = bt.ari_without_noise(y, genieclust.Genie(n_clusters=k).fit_predict(X_raw))
    std = bt.ari_without_noise(y, genieclust.Genie(n_clusters=k).fit_predict(X))
    assert raw == pytest.approx(bt.published_ari("Genie")[key], abs=0.05)
    assert std == pytest.approx(bt.published_ari("Genie", preprocess="scale_standard")[key], abs=0.05)
