"""People-facing number formats of the book's tables."""

import math

import numpy as np

import pytest

from bai_lib import formatting as F


def test_count():
    assert F.count(235030) == "235,030"
    assert F.count(12351.6) == "12,352"
    assert F.count(1.13e8) == "113 million"
    assert F.count(2.2e9) == "2.2 billion"
    assert F.count(7) == "7"
    assert F.count(37.5) == "37.5"
    assert F.count(float("nan")) == "–"
    assert "e" not in F.count(123456789012)
    assert F.count(1.8093e12) == "1.81 trillion"
    assert F.count(2.5e16) == "25,000 trillion"
    assert F.count(9.99e17) == "999,000 trillion"
    assert F.count(1.5576e19) == "1.56 × 10¹⁹"
    assert F.count(9.996e18) == "1.00 × 10¹⁹"
    assert F.number(2**62) == "4.61 × 10¹⁸"
    with pytest.raises(ValueError, match="finite"):
        F.count(math.inf)


def test_number_rate_interval():
    assert F.number(0.000123456) == "0.000123"
    assert F.number(2.55e-14) == "2.55 × 10⁻¹⁴"
    assert F.number(-3.962e-6) == "-3.96 × 10⁻⁶"
    assert F.number(9.996e-6) == "1.00 × 10⁻⁵"          # rounding carries into the power
    assert F.number(0.0000731, digits=2) == "7.3 × 10⁻⁵"
    assert "e" not in F.number(1e-300)
    assert F.number(3.14159) == "3.14"
    assert F.number(1234.5) == "1,234"
    assert F.number(0) == "0"
    assert F.rate(0.016) == "1.6%"
    assert F.rate(0.0) == "0.0%"
    assert F.rate(0.0125, 2) == "1.25%"
    assert F.interval(0.0087, 0.0259, F.rate) == "[0.9%, 2.6%]"
    assert F.interval(float("nan"), 1.0) == "–"


def test_table_builds_formatted_frame():
    rows = [{"alg": "a", "avg": 12351.6, "lo": 0.01, "hi": 0.02},
            {"alg": "b", "avg": 1.5e8, "lo": 0.0, "hi": 0.004}]
    df = F.table(rows, {"": ("alg", str), "Avg": ("avg", F.count),
                        "Error CI": (("lo", "hi"), lambda a, b: F.interval(a, b, F.rate))}, index="")
    assert list(df.columns) == ["Avg", "Error CI"]
    assert df.loc["b", "Avg"] == "150 million"
    assert df.loc["a", "Error CI"] == "[1.0%, 2.0%]"
    with pytest.raises(ValueError, match="index"):
        F.table(rows, {"Avg": ("avg", F.count)}, index="x")


def test_table_cells_are_never_cut_in_html():
    long = "consistent (Avg, Max within the spread of instance sets, and both readings)"
    df = F.table([{"a": "TTTS", "v": long}], {"": ("a", str), "verdict": ("v", str)}, index="")
    html = df._repr_html_()
    assert long in html and "...</td>" not in html
    assert long in df.head(1)._repr_html_()      # derived frames keep the rendering
    import pandas as pd
    assert pd.get_option("display.max_colwidth") == 50   # no global side effect


def test_counted_agrees_the_noun_with_the_number():
    assert F.counted(0, "run") == "no run"
    assert F.counted(1, "run") == "1 run"
    assert F.counted(3, "run") == "3 runs"
    assert F.counted(12352, "run") == "12,352 runs"
    assert F.counted(2, "instance set") == "2 instance sets"
    assert F.counted(np.int64(4), "copy", "copies") == "4 copies"
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="n must"):
            F.counted(bad, "run")
    with pytest.raises(ValueError, match="noun"):
        F.counted(2, "")


def test_counted_of_reads_as_a_finished_phrase():
    assert F.counted_of(3, 33, "grid point") == "3 of the 33 grid points"
    assert F.counted_of(33, 33, "grid point") == "all 33 grid points"
    assert F.counted_of(0, 33, "grid point") == "none of the 33 grid points"
    assert F.counted_of(2, 2, "set") == "both sets"
    assert F.counted_of(0, 2, "set") == "neither set"
    assert F.counted_of(1, 2, "set") == "1 of the 2 sets"
    assert F.counted_of(1, 1, "run") == "the one run"
    assert F.counted_of(0, 1, "run") == "no run"
    assert F.counted_of(np.int64(6), np.int64(6), "indifference stop") == "all 6 indifference stops"
    assert F.counted_of(4, 1000, "run") == "4 of the 1,000 runs"
    assert F.counted_of(3, 5, "copy", "copies") == "3 of the 5 copies"
    assert F.counted_of(5, 5, "copy", "copies") == "all 5 copies"
    for k, n in ((-1, 3), (2.5, 3), (True, 3)):
        with pytest.raises(ValueError, match="k must"):
            F.counted_of(k, n, "run")
    for n in (-1, 2.5, False, "3"):
        with pytest.raises(ValueError, match="n must"):
            F.counted_of(0, n, "run")
    with pytest.raises(ValueError, match="k must not exceed n"):
        F.counted_of(4, 3, "run")
    with pytest.raises(ValueError, match="n must be at least 1"):
        F.counted_of(0, 0, "run")
    with pytest.raises(ValueError, match="noun"):
        F.counted_of(1, 3, "")
    with pytest.raises(ValueError, match="plural"):
        F.counted_of(1, 3, "copy", "")


def test_count_with_puts_the_part_in_brackets():
    assert F.count_with(994, 0, "wrong") == "994 (0 wrong)"
    assert F.count_with(1000, 4, "wrong") == "1,000 (4 wrong)"
    assert F.count_with(np.int64(2), np.int64(1), "wrong") == "2 (1 wrong)"
    with pytest.raises(ValueError, match="part must not exceed n"):
        F.count_with(2, 3, "wrong")
    with pytest.raises(ValueError, match="n must"):
        F.count_with(-1, 0, "wrong")
    with pytest.raises(ValueError, match="part must"):
        F.count_with(3, 1.5, "wrong")
    with pytest.raises(ValueError, match="label"):
        F.count_with(3, 1, "")


def test_in_range_formats_the_value_and_its_interval_alike():
    assert F.in_range(235633, 141754.2, 329512.0, F.count) == "235,633 in [141,754, 329,512]"
    assert F.in_range(0.004, 0.00109, 0.0102, F.rate) == "0.4% in [0.1%, 1.0%]"
    assert F.in_range(3.14159, 3.0, 3.5) == "3.14 in [3.00, 3.50]"
    assert F.in_range(1.0, float("nan"), 2.0) == "1.00 in –"
    with pytest.raises(ValueError, match="fmt"):
        F.in_range(1.0, 0.0, 2.0, "count")
