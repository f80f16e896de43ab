"""Deterministic computations in the run cache (bai_lib.memo): stored on refresh, read on audit,
recomputed by a sample that catches a one-ulp change, refused when edited."""

from __future__ import annotations


import numpy as np
import pytest

import bai_lib
from bai_lib import memo, runcache
from bai_lib.memo import cached_computation, cached_optimum
from bai_lib.optimal import two_arm_bayes_optimal
from bai_lib.runcache import AuditFailure, CacheFileProblem, run_cache

H = bai_lib.GaussianPrior.standard(2)


@pytest.fixture(autouse=True)
def _own_cache_environment(cache_log):
    """Every test runs in a run-cache environment of its own (tests/conftest.py)."""


def _result(shift=0.0):
    return ({"a": 1.5, "n": 3}, {"x": np.array([0.1, 0.2, 0.3]) + shift,
                                 "i": np.arange(3, dtype=np.int64)})


def _fields(rule):
    return (rule.lam, rule.expected_samples, rule.error, rule.delta, rule.start_probability,
            rule.pairs.tolist(), rule.boundary.tolist())


def test_the_optimum_is_the_same_computed_stored_or_read(tmp_path, monkeypatch, cache_log):
    plain = two_arm_bayes_optimal(H, 0.1)
    assert _fields(cached_optimum(H, 0.1)) == _fields(plain)  # no cache in use
    with run_cache(tmp_path / "c", mode="refresh"):
        stored = cached_optimum(H, 0.1)
    (path,) = (tmp_path / "c").glob("optimum-*.parquet")
    before = path.read_bytes()
    monkeypatch.setattr(memo, "AUDIT_PROBABILITY", 1.0)
    with run_cache(tmp_path / "c", mode="audit"):
        read = cached_optimum(H, 0.1)
    with run_cache(tmp_path / "c", mode="refresh"):
        cached_optimum(H, 0.1)
    assert _fields(stored) == _fields(plain) == _fields(read)
    assert path.read_bytes() == before  # a refresh with no change keeps the file as it is
    events = [(e["event"], e.get("verified"), e.get("rewritten")) for e in cache_log()]
    assert events == [("refresh", None, True), ("memo-audit", True, None),
                      ("refresh", None, False)]


def test_a_one_ulp_change_in_the_backward_induction_is_caught(tmp_path, monkeypatch):
    with run_cache(tmp_path / "c", mode="refresh"):
        cached_optimum(H, 0.1)
    real = memo.two_arm_lagrangian

    def off_by_one_ulp(*args, **kwargs):
        rule = real(*args, **kwargs)
        rule.boundary[5] = np.nextafter(rule.boundary[5], np.inf)
        return rule

    monkeypatch.setattr(memo, "two_arm_lagrangian", off_by_one_ulp)
    monkeypatch.setattr(memo, "AUDIT_PROBABILITY", 1.0)
    with run_cache(tmp_path / "c", mode="audit"), \
            pytest.raises(AuditFailure, match=r"boundary \(index 5\).*Audit seed"):
        cached_optimum(H, 0.1)


def test_a_changed_scalar_or_array_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(memo, "AUDIT_PROBABILITY", 1.0)
    with run_cache(tmp_path / "c", mode="refresh"):
        cached_computation("toy", {"p": 1}, _result)
    with run_cache(tmp_path / "c", mode="audit"):
        assert cached_computation("toy", {"p": 1}, _result)[0] == _result()[0]
        with pytest.raises(AuditFailure, match=r"x \(index 0\)"):
            cached_computation("toy", {"p": 1}, lambda: _result(1e-17 + 1e-16))
        with pytest.raises(AuditFailure, match="'a' |a of"):
            cached_computation("toy", {"p": 1}, lambda: ({"a": 2.0, "n": 3}, _result()[1]))


def test_the_audit_recomputes_about_its_share_of_the_reads(tmp_path, monkeypatch):
    with run_cache(tmp_path / "c", mode="refresh"):
        cached_computation("toy", {"p": 1}, _result)
    calls = []
    for seed in range(400):
        monkeypatch.setenv(runcache.SEED_ENV, str(seed))
        with run_cache(tmp_path / "c", mode="audit"):
            cached_computation("toy", {"p": 1}, _result, lambda s: calls.append(seed) or s)
    # Binomial(400, 1/4): mean 100, standard deviation 8.7
    assert 70 <= len(calls) <= 130, len(calls)


def test_a_miss_is_computed_and_logged_and_off_writes_nothing(tmp_path, cache_log):
    with run_cache(tmp_path / "c", mode="audit"):
        assert cached_computation("toy", {"p": 2}, _result)[0] == _result()[0]
    with run_cache(tmp_path / "c", mode="off"):
        cached_computation("toy", {"p": 2}, _result)
    assert not (tmp_path / "c").exists()
    assert [e["event"] for e in cache_log()] == ["miss"]


def test_an_edited_file_is_refused(tmp_path):
    with run_cache(tmp_path / "c", mode="refresh"):
        cached_computation("toy", {"p": 1}, _result)
    (path,) = (tmp_path / "c").glob("toy-*.parquet")
    path.write_bytes(b"not parquet")
    with run_cache(tmp_path / "c", mode="audit"), \
            pytest.raises(CacheFileProblem, match="not readable"):
        cached_computation("toy", {"p": 1}, _result)


@pytest.mark.parametrize("call, name", [
    (lambda: cached_computation("a/b", {}, _result), "kind"),
    (lambda: cached_computation("", {}, _result), "kind"),
    (lambda: cached_optimum(bai_lib.BetaPrior([1, 1], [1, 1]), 0.1), "prior"),
    (lambda: cached_optimum(H, 1.5), "delta"),
    (lambda: cached_optimum(H, 0.1, [1.0, -1.0]), "noise_stds"),
    (lambda: cached_optimum(H, 0.1, dense=2.5), "dense"),
    (lambda: cached_optimum(H, 0.1, m_points="many"), "m_points"),
    (lambda: cached_optimum(H, 0.1, rtol=-1.0), "rtol"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()
