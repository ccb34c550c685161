"""The reproduction ledger (mmcedu.experiments.summary): coverage of the sources, verdicts."""

import pytest

from mmcedu.experiments.registry import PAPER, PaperTable
from mmcedu.experiments.summary import (
    ITEMS,
    LEDGER_HEADERS,
    TIMINGS,
    VERDICTS,
    Measured,
    counts,
    ledger_rows,
    measure,
    verdict,
)

IDS = [it.id for it in ITEMS]


def test_every_item_is_one_row_with_a_verdict_or_a_test():
    assert len(IDS) == len(set(IDS))
    for it in ITEMS:
        assert it.cells >= 1, it.id
        if it.test is None:
            assert it.verdict in VERDICTS, it.id
            if it.verdict in ("not reproducible offline", "not yet measured"):
                assert it.why, f"{it.id}: says why it is not measured"
        else:
            assert it.verdict is None, f"{it.id}: a measured item's verdict is derived"
            assert it.test in ("abs", ">=", "<")
            assert (it.tol if it.test == "abs" else it.threshold) is not None, it.id


def test_every_printed_table_cell_has_exactly_one_item():
    t1 = PAPER["valizadegan2006gmmc"]["Table 1"] | PAPER["valizadegan2006gmmc"]["Table 1 (UCI rows)"]
    for row, cols in t1.items():
        for c in list(cols) + ["ST best k", "ST worst k"]:
            hits = [i for i in IDS if i in (f"G-T1/{row}/{c}", f"G-T1/{row}")]
            assert len(hits) == 1, (row, c, hits)
    umc = PAPER["pahikkala2012umc"]
    for tab, key in (("Table I", "U-T1"), ("Table II", "U-T2")):
        rows = {}
        for part in (["Table II"] if tab == "Table II" else ["Table I", "Table I (other cells)"]):
            for row, cols in umc[part].items():
                rows.setdefault(row, []).extend(cols)
        for row, cols in rows.items():
            for c in cols:
                hits = [i for i in IDS if i in (f"{key}/{row}/{c}", f"{key}/{row}")]
                assert len(hits) == 1, (tab, row, c, hits)
    emmc = PAPER["zhang_emmc"]
    for row in emmc["Table 1"]:
        assert IDS.count(f"E-T1/{row}") == 1
    for tab in ("Table 2", "Table 3"):
        for L in emmc[tab]:
            for out in ("single", "multi"):
                assert IDS.count(f"E-{tab[-1]}/{L}/{out}") == 1
                assert sum(t[0] == f"E-{tab[-1]}/{L}/{out} time" for t in TIMINGS) == 1


def test_no_time_in_the_ledger_of_numbers():
    assert not any("time" in i for i in IDS)


@pytest.mark.parametrize("ours", [0.0, 2.9, 3.1, -3.5])

def test_verdict_follows_the_tolerance(ours):
    it = next(it for it in ITEMS if it.id == "G-T1/Two Circles/GMMC")  # paper 0, tol 3
    assert verdict(it, Measured(ours)) == ("reproduced" if abs(ours) <= 3 else "differs")
    assert verdict(it, None) == "not yet measured"


def test_unmeasured_items_with_a_test_are_not_yet_measured_and_counted():
    rows = ledger_rows({}, full=False)
    assert len(rows) == len(ITEMS) and len(rows[0]) == len(LEDGER_HEADERS)
    i = LEDGER_HEADERS.index("verdict")
    for r, it in zip(rows, ITEMS):
        if it.test:
            assert r[i] == "not yet measured"
    c = counts(rows)
    assert sum(n for n, _ in c.values()) == len(ITEMS)
    assert sum(k for _, k in c.values()) == sum(it.cells for it in ITEMS)


def test_measure_pairs_one_number_per_cell_from_a_method_table():
    t = PaperTable([["Iris", "UMC-RLS", 0.96, 0.90, 0.02, "raw features"]],
                   ["data set", "method", "paper", "mmcedu", "std", "note"],
                   title="Table I (mean ARI), quick 3 x 2 grid, 3 + 5 runs")
    m = measure({"umc_rls_table1": t})
    assert m["U-T1/Iris/UMC-RLS"].value == 0.90 and m["U-T1/Iris/UMC-RLS"].spread == 0.02
    rows = {r[0]: r for r in ledger_rows(m)}
    assert rows["U-T1/Iris/UMC-RLS"][LEDGER_HEADERS.index("verdict")] == "differs"  # 0.06 > 0.05
    assert rows["U-T1/Iris/UMC-RLS"][LEDGER_HEADERS.index("evidence")] == "measured here"
