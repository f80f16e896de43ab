"""The figure helper keeps every figure within the book's column width."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from bai_lib.plotting import figure  # noqa: E402


def test_figures_default_to_the_column_and_stack_rows():
    fig, axes = figure(nrows=3)
    w, h = fig.get_size_inches()
    assert w == pytest.approx(6.4) and h == pytest.approx(3 * 3.8)
    assert len(axes) == 3
    fig2, _ = figure(ncols=2)
    assert fig2.get_size_inches()[0] <= 7.0


def test_figures_wider_than_the_column_are_refused():
    with pytest.raises(ValueError, match="width"):
        figure(ncols=3, width=13)
    with pytest.raises(ValueError, match="ncols"):
        figure(ncols=0)
