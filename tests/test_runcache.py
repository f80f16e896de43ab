"""The run cache (bai_lib.runcache): keyed by the plan, read only after an audit, refreshed
byte-identically, and an audit that fails loudly when a recomputed run differs."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest

import bai_lib
from bai_lib import Elimination, GaussianPrior, TTUCB, runcache
from bai_lib.algorithms import SamplingRule
from bai_lib.plan import RunPlan
from bai_lib.runcache import (AuditFailure, CacheFileProblem, Records, audit_sample, plan_key,
                              run_cache)

ROOT = Path(__file__).resolve().parents[1]
H = GaussianPrior.standard(2)


@pytest.fixture(autouse=True)
def _own_cache_environment(cache_log):
    """Every test runs in a run-cache environment of its own (tests/conftest.py)."""


def _same(a, b):
    return (np.array_equal(a.stopping_times, b.stopping_times)
            and np.array_equal(a.recommendations, b.recommendations)
            and np.array_equal(a.stop_reasons, b.stop_reasons) and a.delta0 == b.delta0
            and np.array_equal(a.means, b.means))


def test_refresh_then_audit_gives_the_computed_results_and_the_stored_clock(tmp_path, cache_log):
    plain = bai_lib.simulate("elimination", H, 1.0, 0.1, 300, seed=5)
    with run_cache(tmp_path / "c", mode="refresh"):
        fresh = bai_lib.simulate("elimination", H, 1.0, 0.1, 300, seed=5)
    with run_cache(tmp_path / "c", mode="audit"):
        cached = bai_lib.simulate("elimination", H, 1.0, 0.1, 300, seed=5)
    assert _same(plain, fresh) and _same(plain, cached)
    # the wall-clock times are those measured when the cache was written (float32)
    np.testing.assert_array_equal(cached.seconds, fresh.seconds.astype(np.float32))
    events = [e["event"] for e in cache_log()]
    assert events == ["refresh", "audit"]
    audit = cache_log()[1]
    assert audit["audited"] >= runcache.AUDIT_MIN_RUNS and audit["runs"] == 300
    assert 0 < audit["samples_audited"] < audit["samples"]


@pytest.mark.parametrize("spec", ["ttucb", Elimination()], ids=["one-trajectory", "per-level"])
def test_several_levels_round_trip(tmp_path, spec, cache_log):
    deltas = [0.1, 0.01, 0.2]
    plain = bai_lib.simulate_deltas(spec, H, 1.0, deltas, 60, seed=2)
    with run_cache(tmp_path / "c", mode="refresh"):
        bai_lib.simulate_deltas(spec, H, 1.0, deltas, 60, seed=2)
    with run_cache(tmp_path / "c", mode="audit"):
        cached = bai_lib.simulate_deltas(spec, H, 1.0, deltas, 60, seed=2)
    assert all(_same(plain[d], cached[d]) for d in deltas)
    assert [e["event"] for e in cache_log()] == ["refresh", "audit"]


def _tampered(tmp_path, n_runs, change):
    """A cache whose one plan has a valid manifest but records changed by ``change``."""
    with run_cache(tmp_path / "c", mode="refresh") as cache:
        bai_lib.simulate("elimination", H, 1.0, 0.1, n_runs, seed=7)
    plan = RunPlan.build("elimination", H, 1.0, [0.1], n_runs, 7)
    key = plan_key(plan)
    path = cache.path(key)
    rec, _ = runcache._read(path, key)
    change(rec)
    runcache._write(path, key, cache.name, rec)
    return path


def test_audit_names_the_cache_plan_run_and_both_values(tmp_path, monkeypatch):
    def change(rec):
        rec.taus[0, 3] += 2
    path = _tampered(tmp_path, 15, change)  # <= 20 runs: every run is audited
    monkeypatch.setenv(runcache.SEED_ENV, "12345")
    with run_cache(tmp_path / "c", mode="audit", name="05_experiment1"):
        with pytest.raises(AuditFailure) as err:
            bai_lib.simulate("elimination", H, 1.0, 0.1, 15, seed=7)
    msg = str(err.value)
    assert "'05_experiment1'" in msg and "stopping time of run 3 " in msg
    assert "δ = 0.1" in msg and path.name in msg and "seed 7" in msg
    assert "Audit seed 12345" in msg and f"{runcache.SEED_ENV}=12345" in msg
    stored, recomputed = msg.split("Stored: ")[1].split("; recomputed: ")
    assert stored.split(",")[0] != recomputed.split(",")[0]


def test_rotation_slices_cover_every_run_once_and_spread_the_long_runs():
    slices, giant = 7, 10**6
    rng = np.random.default_rng(3)
    costs = np.concatenate([rng.integers(1, 20, 93), np.full(7, giant)])  # ties, 7 long runs
    rng.shuffle(costs)
    digest = "3f" * 32
    seen = np.zeros(costs.size, int)
    for r in range(slices):
        pos = runcache.rotation_runs(costs, digest, (r, slices))
        assert pos.dtype == np.int64 and (np.diff(pos) > 0).all()
        seen[pos] += 1
        assert np.count_nonzero(costs[pos] == giant) == 1  # one of the long runs each
        assert costs[pos][costs[pos] < giant].sum() <= costs[costs < giant].sum() / slices + 19
    assert seen.tolist() == [1] * costs.size
    # the slice that holds a plan's longest run depends on the plan
    longest = int(np.argmax(costs))
    holders = {next(r for r in range(slices)
                    if longest in runcache.rotation_runs(costs, d, (r, slices)))
               for d in (hashlib.sha256(bytes([i])).hexdigest() for i in range(20))}
    assert len(holders) > 1
    assert runcache.rotation_runs(costs, digest, None).size == 0


def test_the_rotation_recomputes_a_long_run_the_random_sample_leaves_out(tmp_path, monkeypatch,
                                                                          cache_log):
    """A change confined to one run (the longest, under an audit seed whose sample leaves it
    out) is caught by the session whose rotation holds that run, and by no other."""
    runs = 400
    with run_cache(tmp_path / "c", mode="refresh") as cache:
        res = bai_lib.simulate("elimination", H, 1.0, 0.1, runs, seed=7)
    longest = int(np.argmax(res.stopping_times))
    plan = RunPlan.build("elimination", H, 1.0, [0.1], runs, 7)
    key = plan_key(plan)
    costs = runcache.run_costs(plan, res.stopping_times[None, :])
    digest = cache.path(key).stem
    flags = ~res.correct, res.censored
    seed = next(s for s in range(100) if longest not in audit_sample(s, digest, costs, *flags))
    monkeypatch.setenv(runcache.SEED_ENV, str(seed))
    rec, _ = runcache._read(cache.path(key), key)
    rec.taus[0, longest] += 1
    runcache._write(cache.path(key), key, cache.name, rec)
    slices = 50
    turn = next(r for r in range(slices)
                if longest in runcache.rotation_runs(costs, digest, (r, slices)))
    monkeypatch.setenv(runcache.ROTATION_ENV, f"{(turn + 1) % slices}/{slices}")
    with run_cache(tmp_path / "c", mode="audit"):
        bai_lib.simulate("elimination", H, 1.0, 0.1, runs, seed=7)  # not this slice: passes
    monkeypatch.setenv(runcache.ROTATION_ENV, f"{turn}/{slices}")
    with run_cache(tmp_path / "c", mode="audit"):
        with pytest.raises(AuditFailure, match=f"stopping time of run {longest} "):
            bai_lib.simulate("elimination", H, 1.0, 0.1, runs, seed=7)
    passed = cache_log()[-1]  # the failing audit logs nothing
    assert passed["event"] == "audit" and passed["rotated"] == runs // slices
    for bad in ("3", "5/5", "-1/4", "a/b"):
        monkeypatch.setenv(runcache.ROTATION_ENV, bad)
        with pytest.raises(ValueError, match=runcache.ROTATION_ENV):
            runcache.use_run_cache(tmp_path / "c")


def test_audit_catches_a_changed_recommendation_and_stop_reason(tmp_path):
    def change(rec):
        rec.recs[0, 0] = 1 - rec.recs[0, 0]
    _tampered(tmp_path, 10, change)
    with run_cache(tmp_path / "c", mode="audit"):
        with pytest.raises(AuditFailure, match="recommendation of run 0 "):
            bai_lib.simulate("elimination", H, 1.0, 0.1, 10, seed=7)

    def change_code(rec):
        rec.codes[0, 4] = 3 if rec.codes[0, 4] != 3 else 1
    _tampered(tmp_path, 10, change_code)
    with run_cache(tmp_path / "c", mode="audit"):
        with pytest.raises(AuditFailure, match="stop code of run 4 "):
            bai_lib.simulate("elimination", H, 1.0, 0.1, 10, seed=7)


def test_an_edited_file_is_refused_by_name(tmp_path):
    with run_cache(tmp_path / "c", mode="refresh") as cache:
        bai_lib.simulate("elimination", H, 1.0, 0.1, 50, seed=1)
    (path,) = cache.directory.glob("*.parquet")
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    path.write_bytes(bytes(data))
    with run_cache(tmp_path / "c", mode="audit"):
        with pytest.raises(CacheFileProblem, match=path.name):
            bai_lib.simulate("elimination", H, 1.0, 0.1, 50, seed=1)


def test_another_plans_file_under_this_name_is_refused(tmp_path):
    with run_cache(tmp_path / "c", mode="refresh") as cache:
        bai_lib.simulate("elimination", H, 1.0, 0.1, 50, seed=1)
    (path,) = cache.directory.glob("*.parquet")
    other = cache.path(plan_key(RunPlan.build("elimination", H, 1.0, [0.1], 50, 2)))
    path.rename(other)
    with run_cache(tmp_path / "c", mode="audit"):
        with pytest.raises(CacheFileProblem, match="another plan"):
            bai_lib.simulate("elimination", H, 1.0, 0.1, 50, seed=2)


def test_a_miss_in_audit_mode_is_computed_logged_and_not_written(tmp_path, cache_log):
    with run_cache(tmp_path / "c", mode="audit"):
        res = bai_lib.simulate("elimination", H, 1.0, 0.1, 40, seed=3)
    assert _same(res, bai_lib.simulate("elimination", H, 1.0, 0.1, 40, seed=3))
    assert not (tmp_path / "c").exists()
    (entry,) = cache_log()
    assert entry["event"] == "miss" and entry["runs"] == 40 and "seed 3" in entry["plan"]


def test_off_mode_neither_reads_nor_writes(tmp_path, cache_log):
    with run_cache(tmp_path / "c", mode="off"):
        bai_lib.simulate("elimination", H, 1.0, 0.1, 40, seed=3)
    assert not (tmp_path / "c").exists() and cache_log() == []


def test_refresh_keeps_an_unchanged_file_byte_identical_unless_timings_are_renewed(
        tmp_path, monkeypatch, cache_log):
    with run_cache(tmp_path / "c", mode="refresh") as cache:
        bai_lib.simulate("elimination", H, 1.0, 0.1, 200, seed=4)
    (path,) = cache.directory.glob("*.parquet")
    before = path.read_bytes()
    with run_cache(tmp_path / "c", mode="refresh"):
        bai_lib.simulate("elimination", H, 1.0, 0.1, 200, seed=4)
    assert path.read_bytes() == before
    assert [e["rewritten"] for e in cache_log()] == [True, False]
    monkeypatch.setenv(runcache.TIMINGS_ENV, "1")
    with run_cache(tmp_path / "c", mode="refresh"):
        bai_lib.simulate("elimination", H, 1.0, 0.1, 200, seed=4)
    assert path.read_bytes() != before  # new wall-clock times
    assert cache_log()[-1]["rewritten"] is True


def test_refresh_rewrites_a_file_whose_values_changed(tmp_path):
    def change(rec):
        rec.taus[0, 0] += 2
    path = _tampered(tmp_path, 30, change)
    with run_cache(tmp_path / "c", mode="refresh"):
        res = bai_lib.simulate("elimination", H, 1.0, 0.1, 30, seed=7)
    rec, _ = runcache._read(path, plan_key(RunPlan.build("elimination", H, 1.0, [0.1], 30, 7)))
    np.testing.assert_array_equal(rec.taus[0], res.stopping_times)


def _key(**change):
    args = dict(algorithm=Elimination(), prior=H, noise_stds=1.0, deltas=[0.1], n_runs=10,
                seed=1)
    opts = {k: change.pop(k) for k in list(change) if k in ("means", "first_run", "max_samples",
                                                              "rewards")}
    args.update(change)
    return json.dumps(plan_key(RunPlan.build(**args, **opts)), sort_keys=True)


def test_every_part_of_the_plan_is_in_the_key():
    base = _key()
    variants = [
        _key(algorithm=Elimination(delta0_factor=1)), _key(algorithm=TTUCB()),
        _key(prior=GaussianPrior([0.0, 0.1], [1.0, 1.0])), _key(noise_stds=[1.0, 2.0]),
        _key(deltas=[0.05]), _key(deltas=[0.1, 0.05]), _key(n_runs=11), _key(seed=2),
        _key(first_run=3), _key(max_samples=10**6), _key(means=[0.0, 1.0]),
        _key(means=[0.0, 1.0 + 2**-52]),
        _key(algorithm=Elimination(), prior=bai_lib.BetaPrior([1, 1], [1, 2]), noise_stds=None),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert _key() == base  # and the key is a function of the plan alone
    # an option given at its default is the same question; the two-arm walk is another class
    assert _key(algorithm=Elimination(delta0_factor=None, recommend="uniform")) == base
    assert _key(algorithm=Elimination().two_arm_walk()) != base
    key = plan_key(RunPlan.build(TTUCB(beta=0.3), H, 1.0, [0.1], 10, 1))
    assert key["algorithm"] == {"class": "TTUCB", "options": {"beta": 0.3}}


@numba.njit
def _round_robin(t, N, S, noise_stds, state):
    return t % N.size


def test_a_plan_holding_code_is_computed_not_cached(tmp_path):
    rule = SamplingRule(_round_robin)
    with run_cache(tmp_path / "c", mode="refresh"):
        bai_lib.simulate(rule, None, 1.0, 0.1, 5, seed=1, means=[1.0, 0.0])
    assert not (tmp_path / "c").exists()
    assert plan_key(RunPlan.build(rule, None, 1.0, [0.1], 5, 1, means=[1.0, 0.0])) is None


def test_censoring_is_still_reported_from_the_cache(tmp_path):
    with run_cache(tmp_path / "c", mode="refresh"):
        with pytest.warns(bai_lib.CensoringWarning):
            bai_lib.simulate("elimination", H, 1.0, 0.001, 30, seed=1, max_samples=50)
    with run_cache(tmp_path / "c", mode="audit"):
        with pytest.warns(bai_lib.CensoringWarning, match="censored"):
            bai_lib.simulate("elimination", H, 1.0, 0.001, 30, seed=1, max_samples=50)


def test_the_audit_sample_is_stratified_and_seeded():
    rng = np.random.default_rng(0)
    n = 1000
    costs = rng.pareto(1.0, n) + 1
    erring = np.zeros(n, bool)
    erring[[5, 17]] = True
    censored = np.zeros(n, bool)
    censored[np.argsort(costs)[-30:-20]] = True  # long, but each within the budget
    a = audit_sample(1, "ab" * 32, costs, erring, censored)
    assert a.size >= runcache.AUDIT_MIN_RUNS and np.all(np.diff(a) > 0)
    deciles = np.array_split(np.argsort(costs, kind="stable"), 10)
    assert all(np.intersect1d(a, d).size for d in deciles)
    assert erring[a].any() and censored[a].any()
    assert costs[a].sum() <= runcache.AUDIT_SHARE * costs.sum()
    # the budget left goes to long runs: more of the top decile than one
    assert np.intersect1d(a, deciles[-1]).size > 1
    assert np.array_equal(a, audit_sample(1, "ab" * 32, costs, erring, censored))
    others = [audit_sample(s, "ab" * 32, costs, erring, censored) for s in range(2, 12)]
    assert sum(not np.array_equal(a, b) for b in others) == 10
    assert not np.array_equal(a, audit_sample(1, "cd" * 32, costs, erring, censored))
    small = audit_sample(1, "ab" * 32, costs[:20], erring[:20], censored[:20])
    assert np.array_equal(small, np.arange(20))


def test_a_plan_of_equally_long_runs_audits_what_the_budget_allows():
    costs = np.full(32, 2.4e9)  # importance sampling: every run near a tie
    a = audit_sample(3, "ab" * 32, costs, np.zeros(32, bool), np.zeros(32, bool))
    assert a.size == 3 and costs[a].sum() <= runcache.AUDIT_SHARE * costs.sum()
    one = audit_sample(3, "ab" * 32, np.array([5.0] + [1e9] * 29), np.zeros(30, bool),
                       np.zeros(30, bool), share=1e-12)
    assert one.tolist() == [0]  # nothing fits: the cheapest run all the same


def test_a_run_over_the_budget_is_left_out_and_cheap_runs_complete_the_sample():
    costs = np.ones(40)
    costs[7] = 1e6  # one run holds nearly all the samples; censored
    censored = np.zeros(40, bool)
    censored[7] = True
    for seed in range(5):
        a = audit_sample(seed, "ef" * 32, costs, np.zeros(40, bool), censored)
        assert 7 not in a and a.size >= runcache.AUDIT_MIN_RUNS


def test_mode_and_seed_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(runcache.MODE_ENV, "refresh")
    assert runcache.use_run_cache(tmp_path).mode == "refresh"
    monkeypatch.setenv(runcache.FULL_ENV, "a, other")
    assert runcache.use_run_cache(tmp_path / "other").mode == "off"
    assert runcache.use_run_cache(tmp_path / "b").mode == "refresh"
    monkeypatch.setenv(runcache.MODE_ENV, "sometimes")
    with pytest.raises(ValueError, match=runcache.MODE_ENV):
        runcache.use_run_cache(tmp_path / "b")
    with pytest.raises(ValueError, match="mode"):
        runcache.use_run_cache(tmp_path, mode="always")
    monkeypatch.delenv(runcache.MODE_ENV)
    assert runcache.use_run_cache(tmp_path / "b").mode == "audit"
    monkeypatch.setenv(runcache.SEED_ENV, "-3")
    with pytest.raises(ValueError, match=runcache.SEED_ENV):
        runcache.use_run_cache(tmp_path)
    monkeypatch.setenv(runcache.SEED_ENV, "77")
    assert runcache.use_run_cache(tmp_path).audit_seed == 77


def test_run_cache_block_restores_the_previous_cache(tmp_path):
    outer = runcache.use_run_cache(tmp_path / "a", mode="off")
    with run_cache(tmp_path / "b", mode="audit") as inner:
        assert runcache.active_cache() is inner
    assert runcache.active_cache() is outer


def test_records_take_selects_runs():
    rec = Records(np.arange(6).reshape(1, 6), np.zeros((1, 6), int), np.ones((1, 6), int),
                  np.zeros((1, 6)), [None])
    part = rec.take(np.array([1, 4]))
    assert part.taus.tolist() == [[1, 4]] and dataclasses.is_dataclass(part)


def _root_conftest():
    spec = importlib.util.spec_from_file_location("bai_lib_root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_test_session_settings_match_the_library():
    conf = _root_conftest()
    assert (conf.CACHE_MODE_ENV, conf.AUDIT_SEED_ENV, conf.CACHE_LOG_ENV, conf.CACHE_FULL_ENV,
            conf.CACHE_ROTATION_ENV, conf.ROTATION_SLICES) \
        == (runcache.MODE_ENV, runcache.SEED_ENV, runcache.LOG_ENV, runcache.FULL_ENV,
            runcache.ROTATION_ENV, runcache.ROTATION_SLICES)
    script = conf.load_execute_script()
    assert (script.RUN_CACHE_ENV, script.RUN_CACHE_LOG_ENV, script.ROTATION_ENV,
            script.ROTATION_SLICES) == (runcache.MODE_ENV, runcache.LOG_ENV,
                                        runcache.ROTATION_ENV, runcache.ROTATION_SLICES)
    assert conf.rotation("0" * 38 + "6e") == "10/50"  # 0x6e = 110
    assert conf.rotation(None) == "0/50"
    assert conf.notebook_prefix("05_experiment1") == "05_" and conf.notebook_prefix("plain") == "plain"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lines = conf.audit_summary([
            {"event": "audit", "cache": "05_a", "audited": 20, "samples": 1000,
             "samples_audited": 100, "seconds": 2.0, "seconds_audited": 0.2, "rotated": 3},
            {"event": "miss", "cache": "05_a"}])
    assert lines == ["05_a: 1 plans audited, 20 runs recomputed (3 by the rotation), 10.0% of "
                     "the samples "
                     "(0.2 of 2.0 stored kernel-seconds)"]


def test_a_tuple_holding_code_makes_the_value_unkeyable():
    assert runcache._canonical((1, 2.5)) == {"tuple": [1, 2.5]}
    assert runcache._canonical((1, _round_robin)) is runcache._NOT
