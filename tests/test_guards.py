"""The shared guards: memory budget, scale checks, degenerate kernels, package settings."""

import warnings

import numpy as np
import pytest

import mmcedu
from mmcedu._config import default_memory_budget, parse_bytes
from mmcedu._validation import (
    all_identical,
    array_bytes,
    check_finite_result,
    check_memory,
    check_scale,
    format_bytes,
    warn_degenerate_kernel,
)
from mmcedu.exceptions import DegenerateDataWarning, MemoryBudgetError


def test_parse_bytes_units_and_errors():
    assert parse_bytes("8GiB") == 8 * 2**30
    assert parse_bytes("8GB") == 8 * 10**9
    assert parse_bytes(" 512 MiB ") == 512 * 2**20
    assert parse_bytes(1e9) == 10**9
    assert parse_bytes("2e9") == 2 * 10**9
    for bad in ("lots", "-1GB", 0, -5, True, "8 parsecs", float("inf")):
        with pytest.raises(ValueError):
            parse_bytes(bad)


def test_memory_budget_default_env_and_context(monkeypatch):
    monkeypatch.delenv("MMCEDU_MEMORY_BUDGET", raising=False)
    assert 0 < default_memory_budget() <= 8 * 2**30
    monkeypatch.setenv("MMCEDU_MEMORY_BUDGET", "3GB")
    assert mmcedu.get_config()["memory_budget"] == 3 * 10**9
    with mmcedu.config_context(memory_budget="1MB"):
        assert mmcedu.get_config()["memory_budget"] == 10**6
        with pytest.raises(MemoryBudgetError, match="above the memory budget of") as info:
            check_memory(array_bytes((1000, 1000)), what="a 1000 x 1000 kernel",
                         alternative="Pass n_components.")
        assert "Pass n_components." in str(info.value) and "7.6 MiB" in str(info.value)
    assert mmcedu.get_config()["memory_budget"] == 3 * 10**9
    check_memory(array_bytes((1000, 1000)), what="a kernel")  # fits: no error


def test_memory_budget_error_is_a_memory_error():
    assert issubclass(MemoryBudgetError, MemoryError)


def test_format_and_array_bytes():
    assert array_bytes((10, 10), (5,)) == 8 * 105
    assert array_bytes((10, 10), itemsize=4) == 400
    assert format_bytes(512) == "512 B"
    assert format_bytes(3 * 2**30) == "3.0 GiB"


@pytest.mark.parametrize("scale", [1e152, 1e200, 1e300])
def test_check_scale_huge(scale):
    X = np.random.RandomState(0).randn(10, 3) * scale
    with pytest.raises(ValueError, match="overflow float64.*Standardize"):
        check_scale(X)


def test_check_scale_tiny_and_normal():
    rng = np.random.RandomState(0)
    with pytest.raises(ValueError, match="underflow"):
        check_scale(rng.randn(10, 3) * 1e-150)
    check_scale(rng.randn(10, 3))
    check_scale(rng.randn(10, 3) * 1e100)
    check_scale(np.ones((5, 2)))  # identical rows are a degenerate-data matter, not a scale one


def test_check_finite_result():
    check_finite_result(np.ones(3), what="K", hint="h")
    with pytest.raises(ValueError, match="K is not finite.*standardize"):
        check_finite_result(np.array([1.0, np.nan]), what="K", hint="standardize X")


def test_all_identical():
    assert all_identical(np.ones((4, 2)))
    assert not all_identical(np.eye(3))


def test_warn_degenerate_kernel():
    with pytest.warns(DegenerateDataWarning, match="numerically the identity"):
        assert warn_degenerate_kernel(np.eye(5), 1e9, who="X")
    with pytest.warns(DegenerateDataWarning, match="all ones"):
        assert warn_degenerate_kernel(np.ones((5, 5)), 1e-9, who="X")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = np.exp(-np.abs(np.subtract.outer(np.arange(5.0), np.arange(5.0))))
        assert not warn_degenerate_kernel(K, 1.0, who="X")
