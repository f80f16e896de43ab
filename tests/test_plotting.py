"""The figure helper keeps every figure within the book's column width."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

from bai_lib.plotting import MIN_TEXT_PX, PHONE_COLUMN_PX, figure, smallest_text_px  # noqa: E402


def test_figures_default_to_the_column_and_stack_rows():
    fig, axes = figure(nrows=3)
    w, h = fig.get_size_inches()
    assert w == pytest.approx(6.0) and h == pytest.approx(3 * 3.8)
    assert len(axes) == 3
    fig2, _ = figure(ncols=2)
    assert fig2.get_size_inches()[0] <= 7.0


def test_figures_wider_than_the_column_are_refused():
    with pytest.raises(ValueError, match="width"):
        figure(ncols=3, width=13)
    with pytest.raises(ValueError, match="ncols"):
        figure(ncols=0)


def _busy_figure(**kwargs):
    """A figure with every kind of text the chapters draw: title, labels, ticks, a two-column
    legend with a mathtext label, an annotation."""
    fig, axes = figure(**kwargs)
    ax = axes if kwargs.get("nrows", 1) == 1 else axes[-1]
    for j in range(4):
        ax.loglog([1, 10, 100], [1, 10 ** (j / 4), 100 ** (j / 3)], label=f"curve {j}")
    ax.plot([1, 100], [2, 3], label=r"$\delta / (4L)$ and $\frac{1}{\Delta^2}$")
    ax.set_title("title")
    ax.set_xlabel(r"$1/\delta$")
    ax.set_ylabel("mean stopping time")
    ax.text(2, 50, "an annotation")
    ax.legend(ncol=2)
    fig.canvas.draw()
    return fig


def test_every_text_of_the_style_is_legible_on_a_phone():
    """Shown 353 px wide (a 400 px phone screen), the smallest text is at least 8 CSS px tall."""
    for kwargs in ({}, {"nrows": 2, "height": 6.4}, {"nrows": 3, "height": 9.0}):
        fig = _busy_figure(**kwargs)
        assert smallest_text_px(fig) >= MIN_TEXT_PX, kwargs
        plt.close(fig)


def test_smallest_text_px_sees_a_small_legend_and_a_wide_figure():
    fig = _busy_figure()
    fig.axes[0].legend(fontsize=7.5)
    fig.canvas.draw()
    assert smallest_text_px(fig) < MIN_TEXT_PX
    assert smallest_text_px(fig) == pytest.approx(
        7.5 / 72 * PHONE_COLUMN_PX / fig.get_tightbbox().width, rel=1e-9)
    plt.close(fig)
    wide = _busy_figure(width=7.0)
    assert smallest_text_px(wide, column_px=300) < smallest_text_px(wide)
    with pytest.raises(ValueError, match="column_px"):
        smallest_text_px(wide, column_px=0)
    plt.close(wide)
