"""Which convention for Δ0 produced a published table: ``convention_matches`` and
``describe_matches`` (chapter 06, "Which convention produced Table 2?")."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from bai_lib._book import convention_matches, describe_matches

ROOT = Path(__file__).resolve().parents[1]
A, B = "delta/(4L)", "delta/L"
LABELS = {A: "δ/(4L)", B: "δ/L"}


def row(algorithm="elimination", *, avg=100.0, avg_ci=(90.0, 110.0), max=1000,
        error=0.01, error_ci=(0.005, 0.02), paper_avg=100.0, paper_max=1000.0,
        paper_error=0.01):
    """A hand-made row with the keys of ``comparison_rows``."""
    return {"algorithm": algorithm, "avg": avg, "avg_ci_low": avg_ci[0],
            "avg_ci_high": avg_ci[1], "max": max, "median": 50.0, "q90": 80.0, "q99": 99.0,
            "error": error, "error_ci_low": error_ci[0], "error_ci_high": error_ci[1],
            "n_censored": 0, "paper_avg": paper_avg, "paper_max": paper_max,
            "paper_error": paper_error}


def verdicts(rows_a, rows_b, algorithms=("elimination",), **options):
    out = convention_matches({A: rows_a, B: rows_b}, list(algorithms), **options)
    return {(r["algorithm"], r["metric"]): r["matches"] for r in out}


# --- the ranges ----------------------------------------------------------------------------------

def test_avg_inside_one_interval_only():
    a = [row(avg_ci=(200.0, 300.0), paper_avg=150.0)]
    b = [row(avg_ci=(100.0, 180.0), paper_avg=150.0)]
    assert verdicts(a, b)[("elimination", "avg")] == B
    assert verdicts(b, a)[("elimination", "avg")] == A


def test_both_and_neither():
    inside = [row(avg_ci=(90.0, 110.0), paper_avg=100.0)]
    also_inside = [row(avg_ci=(99.0, 130.0), paper_avg=100.0)]
    outside_low = [row(avg_ci=(101.0, 130.0), paper_avg=100.0)]
    outside_high = [row(avg_ci=(50.0, 99.9), paper_avg=100.0)]
    assert verdicts(inside, also_inside)[("elimination", "avg")] == "both"
    assert verdicts(outside_low, outside_high)[("elimination", "avg")] == "neither"


def test_interval_ends_count_as_inside():
    at_low = [row(avg_ci=(100.0, 120.0), paper_avg=100.0,
                  error_ci=(0.01, 0.03), paper_error=0.01)]
    at_high = [row(avg_ci=(80.0, 100.0), paper_avg=100.0,
                   error_ci=(0.0, 0.01), paper_error=0.01)]
    v = verdicts(at_low, at_high)
    assert v[("elimination", "avg")] == "both"
    assert v[("elimination", "error")] == "both"


def test_error_uses_the_clopper_pearson_columns():
    # a published 0% lies outside an interval whose low end is above 0 ...
    a = [row(error=0.001, error_ci=(2.5e-5, 0.0056), paper_error=0.0)]
    # ... and inside one that starts at 0
    b = [row(error=0.0, error_ci=(0.0, 0.0037), paper_error=0.0)]
    out = convention_matches({A: a, B: b}, ["elimination"], metrics=["error"])
    assert [r["matches"] for r in out] == [B]
    assert out[0]["low_" + A] == 2.5e-5 and out[0]["high_" + A] == 0.0056
    assert out[0]["fits_" + A] is False and out[0]["fits_" + B] is True


def test_max_is_matched_within_five_percent():
    ours = [row(max=1000)]                       # range [1000 / 1.05, 1000 / 0.95]
    for paper, fits in [(1000.0, True), (1052.0, True), (1053.0, False), (953.0, True),
                        (952.0, False), (1000 / 0.95, True), (1000 / 1.05, True)]:
        other = [row(max=10**6, paper_max=paper)]
        v = verdicts([row(max=1000, paper_max=paper)], other)
        assert v[("elimination", "max")] == (A if fits else "neither"), paper
    out = convention_matches({A: ours, B: ours}, ["elimination"], metrics=["max"])
    assert out[0]["low_" + A] == pytest.approx(952.380952)
    assert out[0]["high_" + A] == pytest.approx(1052.631579)


def test_max_tolerance_is_a_parameter():
    a = [row(max=1000, paper_max=1030.0)]
    b = [row(max=1070, paper_max=1030.0)]
    assert verdicts(a, b)[("elimination", "max")] == "both"
    assert verdicts(a, b, max_tolerance=0.01)[("elimination", "max")] == "neither"
    assert verdicts(a, b, max_tolerance=0.0)[("elimination", "max")] == "neither"
    exact = [row(max=1030, paper_max=1030.0)]
    assert verdicts(exact, b, max_tolerance=0.0)[("elimination", "max")] == A


def test_undefined_interval_matches_nothing():
    nan = [row(avg_ci=(math.nan, math.nan), paper_avg=100.0)]
    ok = [row(avg_ci=(90.0, 110.0), paper_avg=100.0)]
    assert verdicts(nan, ok)[("elimination", "avg")] == B
    assert verdicts(nan, nan)[("elimination", "avg")] == "neither"


def test_rows_are_algorithm_major_with_our_values():
    a = [row("noelim", avg=5.0, max=7), row("elimination", avg=1.0, max=3)]
    b = [row("elimination", avg=2.0, max=4), row("noelim", avg=6.0, max=8)]
    out = convention_matches({A: a, B: b}, ["elimination", "noelim"], metrics=("max", "avg"))
    assert [(r["algorithm"], r["metric"]) for r in out] == [
        ("elimination", "max"), ("elimination", "avg"), ("noelim", "max"), ("noelim", "avg")]
    assert list(out[0]) == ["algorithm", "metric", "paper",
                            f"ours_{A}", f"low_{A}", f"high_{A}", f"fits_{A}",
                            f"ours_{B}", f"low_{B}", f"high_{B}", f"fits_{B}", "matches"]
    assert (out[0][f"ours_{A}"], out[0][f"ours_{B}"]) == (3, 4)
    assert (out[3][f"ours_{A}"], out[3][f"ours_{B}"]) == (5.0, 6.0)
    assert out[0]["paper"] == 1000.0


def test_reproduces_chapter_06_verdicts_from_its_tables():
    """The tracked Table 2 CSVs of both conventions give the tracked verdicts."""
    def read(name):
        with (ROOT / "results" / name).open() as fh:
            return [{k: (v if k == "algorithm" else float(v)) for k, v in r.items()}
                    for r in csv.DictReader(fh)]

    out = convention_matches({A: read("06_table2_factor4.csv"), B: read("06_table2_factor1.csv")},
                             ["elimination", "noelim"])
    with (ROOT / "results" / "06_verdicts.csv").open() as fh:
        expected = [(r["algorithm"], r["metric"], r["verdict"]) for r in csv.DictReader(fh)]
    assert [(r["algorithm"], r["metric"].capitalize(), r["matches"]) for r in out] == expected


# --- the words -----------------------------------------------------------------------------------

def _table2_like():
    """Algorithm 1 matches δ/L everywhere; NoElim's error fits neither convention."""
    a = [row("elimination", avg_ci=(50.0, 200.0), paper_avg=100.0, max=18000,
             error_ci=(0.0, 0.005), paper_error=0.006),
         row("noelim", avg_ci=(50.0, 200.0), paper_avg=100.0, max=18000,
             error_ci=(0.0001, 0.005), paper_error=0.0)]
    b = [row("elimination", avg_ci=(80.0, 120.0), paper_avg=100.0, max=1000,
             error_ci=(0.001, 0.01), paper_error=0.006),
         row("noelim", avg_ci=(80.0, 120.0), paper_avg=100.0, max=1000,
             error_ci=(0.0001, 0.005), paper_error=0.0)]
    return convention_matches({A: a, B: b}, ["elimination", "noelim"])


def test_describe_matches_reads_as_in_chapter_06():
    m = _table2_like()
    assert describe_matches(m, "elimination", B, LABELS) == "Δ0 = δ/L (Avg, Max, Error match)"
    assert describe_matches(m, "noelim", B, LABELS) == (
        "Δ0 = δ/L (Avg, Max match); Error fits neither")


def test_describe_matches_from_the_other_convention():
    m = _table2_like()
    assert describe_matches(m, "elimination", A, LABELS) == (
        "Δ0 = δ/(4L) (Avg matches); Max, Error fit δ/L only")
    assert describe_matches(m, "noelim", A) == (
        "Δ0 = delta/(4L) (Avg matches); Max fits delta/L only; Error fits neither")


def test_describe_matches_when_nothing_matches_the_convention():
    a = [row(max=1000, paper_max=1000.0, paper_avg=500.0)]
    b = [row(max=9000, paper_max=1000.0, paper_avg=500.0)]
    m = convention_matches({A: a, B: b}, ["elimination"], metrics=["max", "avg"])
    assert describe_matches(m, "elimination", B, LABELS) == (
        "not Δ0 = δ/L; Max fits δ/(4L) only; Avg fits neither")


# --- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("rows_by_convention, match", [
    ({A: [row()]}, "rows_by_convention must map exactly two"),
    ({A: [row()], B: [row()], "third": [row()]}, "rows_by_convention must map exactly two"),
    ([[row()], [row()]], "rows_by_convention must map exactly two"),
    ({"both": [row()], B: [row()]}, "rows_by_convention: convention names"),
    ({A: [row()], B: [{"algorithm": "elimination", "avg": 1.0}]},
     r"rows_by_convention: the row of 'elimination' under 'delta/L' lacks"),
    ({A: [row(paper_avg=1.0)], B: [row(paper_avg=2.0)]},
     "rows_by_convention: the published avg of 'elimination' differs"),
])
def test_bad_rows_raise(rows_by_convention, match):
    with pytest.raises(ValueError, match=match):
        convention_matches(rows_by_convention, ["elimination"])


@pytest.mark.parametrize("options, match", [
    ({"algorithms": ["ttts"]}, r"algorithms: 'ttts' occurs 0 times"),
    ({"algorithms": "elimination"}, "algorithms must be a non-empty sequence"),
    ({"algorithms": []}, "algorithms must be a non-empty sequence"),
    ({"metrics": ["comp"]}, "metrics must be some of"),
    ({"metrics": "avg"}, "metrics must be a non-empty sequence"),
    ({"metrics": ["avg", "avg"]}, "metrics must not repeat"),
    ({"max_tolerance": 1.0}, r"max_tolerance must lie in \[0, 1\)"),
    ({"max_tolerance": -0.05}, r"max_tolerance must lie in \[0, 1\)"),
    ({"max_tolerance": True}, "max_tolerance must be a finite real number"),
])
def test_bad_options_raise(options, match):
    options = {"algorithms": ["elimination"], **options}
    with pytest.raises(ValueError, match=match):
        convention_matches({A: [row()], B: [row()]}, **options)


def test_repeated_algorithm_raises():
    with pytest.raises(ValueError, match=r"algorithms: 'elimination' occurs 2 times"):
        convention_matches({A: [row(), row()], B: [row()]}, ["elimination"])


def test_describe_matches_bad_input_raises():
    m = _table2_like()
    with pytest.raises(ValueError, match=r"algorithm must be one of \['elimination', 'noelim'\]"):
        describe_matches(m, "ttts", B)
    with pytest.raises(ValueError, match="convention must be one of"):
        describe_matches(m, "elimination", "delta/(2L)")
    with pytest.raises(ValueError, match="match_rows must be the non-empty list"):
        describe_matches([], "elimination", B)
    with pytest.raises(ValueError, match="match_rows must be rows of convention_matches"):
        describe_matches([row()], "elimination", B)
    with pytest.raises(ValueError, match="labels must map"):
        describe_matches(m, "elimination", B, labels=["δ/L"])
