"""The numbers published in the paper's Tables 1-4, in one place.

Source: Jang, Komiyama and Yamazaki (NeurIPS 2024), Section 6 (Tables 1 and 2) and
Appendix "Tables including computation time" (Tables 3 and 4, which repeat Tables 1
and 2 and add the mean computation time per run, in seconds).

Every value is recorded with the table and column it comes from. Stopping times are
total numbers of samples ``τ`` ("Avg", "Max"), errors are fractions of the
``N = 1000`` runs ("Error", printed in percent), and "Comp" is seconds per run on the
authors' hardware (Python 3.7, MacBook Pro M2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["PublishedRow", "TABLES", "EXPERIMENTS", "READINGS", "row", "glue_values", "EXPERIMENT3",
           "ReleasedOutput", "EXPERIMENT3_OUTPUTS"]


@dataclass(frozen=True)
class PublishedRow:
    """One row of a published table.

    Attributes
    ----------
    table : int
        Table number in the paper (1-4).
    algorithm : str
        Algorithm key as accepted by :func:`bai_lib.simulate`.
    avg, max : float
        Columns "Avg" and "Max" (samples).
    error : float
        Column "Error" as a fraction (the paper prints percent).
    comp : float or None
        Column "Comp." in seconds per run (Tables 3 and 4 only).
    """

    table: int
    algorithm: str
    avg: float
    max: float
    error: float
    comp: float | None = None


_ROWS = [
    # Table 1 / Table 3: k = 2, standard normal prior, sigma = 1, delta = 0.1, N = 1000
    PublishedRow(1, "elimination", 1.06e4, 2.35e5, 0.015),
    PublishedRow(1, "ttts", 1.56e5, 1.09e8, 0.005),
    PublishedRow(1, "ttucb", 1.95e5, 1.13e8, 0.0),
    PublishedRow(3, "elimination", 1.06e4, 2.35e5, 0.015, 0.17),
    PublishedRow(3, "ttts", 1.56e5, 1.09e8, 0.005, 27.6),
    PublishedRow(3, "ttucb", 1.95e5, 1.13e8, 0.0, 5.07),
    # Table 2 / Table 4: k = 10, standard normal prior, sigma = 1, delta = 0.01, N = 1000
    PublishedRow(2, "elimination", 2.69e5, 1.66e7, 0.006),
    PublishedRow(2, "noelim", 1.29e6, 8.25e7, 0.0),
    PublishedRow(4, "elimination", 2.69e5, 1.66e7, 0.006, 1.59),
    PublishedRow(4, "noelim", 1.29e6, 8.25e7, 0.0, 5.5),
]

#: ``TABLES[t][algorithm]`` is the published row of table ``t``.
TABLES = MappingProxyType(
    {t: MappingProxyType({r.algorithm: r for r in _ROWS if r.table == t}) for t in (1, 2, 3, 4)}
)

#: Settings of the two experiments of Section 6, each a standard normal prior with ``k`` arms.
EXPERIMENTS = MappingProxyType(
    {
        1: MappingProxyType(dict(k=2, noise_std=1.0, delta=0.1, n_runs=1000, tables=(1, 3),
                                 algorithms=("elimination", "ttts", "ttucb"))),
        2: MappingProxyType(dict(k=10, noise_std=1.0, delta=0.01, n_runs=1000, tables=(2, 4),
                                 algorithms=("elimination", "noelim"))),
    }
)


#: Readings of a published row. ``"as_printed"``: the row as labelled in the paper.
#: ``"swapped"`` (Tables 1 and 3 only): the released Experiment 1 notebook runs the algorithms in
#: the order TTTS, TTUCB, Elimination but collects the stopping times and computation times of
#: run ``i`` as ``TTTS = hist[3i+1]`` and ``TTUCB = hist[3i]``, so the printed TTTS columns Avg,
#: Max and Comp hold TTUCB's values and the reverse; the Error column is collected correctly and
#: stays with its label.
READINGS = ("as_printed", "swapped")

_SWAP = {"ttts": "ttucb", "ttucb": "ttts"}


def glue_values(tables: Iterable[int]) -> dict:
    """Every published value of ``tables`` under a stable name, for pasting into prose.

    Keys are ``pub_t{table}_{algorithm}_{column}`` (column ``avg``, ``max``, ``error`` or
    ``comp``, the seconds per run, and ``comp_ms``, the same in milliseconds) as printed, and the
    same with the suffix ``_swapped`` for the reading of :data:`READINGS` where the TTTS and
    TTUCB labels of Tables 1 and 3 are exchanged.
    """
    out = {}
    for t in tables:
        if t not in TABLES:
            raise ValueError(f"table must be one of {sorted(TABLES)}, got {t!r}")
        for alg in TABLES[t]:
            for reading in READINGS if t in (1, 3) else ("as_printed",):
                r = row(t, alg, reading)
                suffix = "" if reading == "as_printed" else "_swapped"
                for col in ("avg", "max", "error", "comp"):
                    if getattr(r, col) is not None:
                        out[f"pub_t{t}_{alg}_{col}{suffix}"] = float(getattr(r, col))
                if r.comp is not None:   # seconds per run, also in milliseconds like ours
                    out[f"pub_t{t}_{alg}_comp_ms{suffix}"] = 1e3 * float(r.comp)
    return out


def row(table: int, algorithm: str, reading: str = "as_printed") -> PublishedRow:
    """Return the published row, with a clear error for an unknown table, algorithm or reading.

    With ``reading="swapped"`` (Tables 1 and 3) the Avg, Max and Comp of TTTS and TTUCB are
    exchanged and the Error is kept, see :data:`READINGS`.
    """
    if table not in TABLES:
        raise ValueError(f"table must be one of {sorted(TABLES)}, got {table!r}")
    if algorithm not in TABLES[table]:
        raise ValueError(
            f"algorithm must be one of {sorted(TABLES[table])} for table {table}, got {algorithm!r}"
        )
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    r = TABLES[table][algorithm]
    if reading == "swapped" and table not in (1, 3):
        raise ValueError(f"reading 'swapped' applies to Tables 1 and 3 only, not to table {table}")
    if reading == "as_printed" or algorithm not in _SWAP:
        return r
    other = TABLES[table][_SWAP[algorithm]]
    return PublishedRow(table, algorithm, other.avg, other.max, r.error, other.comp)


# ---------------------------------------------------------------------------
# Experiment 3 (arXiv appendix F.4): heterogeneous priors, run by the released code
# ---------------------------------------------------------------------------

#: Setting of Experiment 3 as printed in the stored output of the authors' released notebook:
#: ``K = 10`` arms, arm ``i`` with prior ``N(m_i, ξ_i²)`` and noise ``σ_i``, where the notebook
#: drew ``m_i ~ N(0, 1)``, ``ξ_i ~ U(0.5, 1.5)`` and ``σ_i ~ U(0.5, 1.5)`` once, without a seed;
#: ``δ = 0.1``, 500 runs, runs stopped after ``10⁸`` samples. ``released_delta0`` is the ``Δ0``
#: the notebook printed; it comes from ``L`` computed with prior densities not divided by ``ξ``
#: (see :func:`bai_lib.priors.L_released`).
EXPERIMENT3 = MappingProxyType(dict(
    k=10, delta=0.1, n_runs=500, max_samples=10**8,
    prior_means=(-0.05261541, 0.52767271, -0.33152129, -0.36781578, -0.27298596, 0.90868056,
                 0.41845086, -1.16969592, 0.87341374, -0.40510192),
    prior_stds=(0.60372243, 1.47713147, 1.1629126, 0.98813025, 0.56025528, 0.5131734,
                0.9966126, 1.33176296, 0.82807594, 0.83345155),
    noise_stds=(1.49848059, 1.2616226, 1.48519329, 0.96316585, 1.37547129, 0.96947624,
                1.35714261, 1.23770972, 1.08750015, 0.69850409),
    hyper_draws=dict(prior_mean=(0.0, 1.0), prior_std=(0.5, 1.5), noise_std=(0.5, 1.5)),
    released_delta0=0.02295460533220602,
))


@dataclass(frozen=True)
class ReleasedOutput:
    """A number printed in the stored output of the released Experiment 3 notebook.

    Attributes
    ----------
    algorithm : str
    avg : float
        Mean stopping time over the 500 runs (samples).
    comp : float
        Mean computation time per run (seconds, authors' hardware).
    """

    algorithm: str
    avg: float
    comp: float


#: Outputs of the released Experiment 3 notebook (Algorithm 1 and TTUCB only; no error rate
#: and no maximum were printed).
EXPERIMENT3_OUTPUTS = MappingProxyType({
    "elimination": ReleasedOutput("elimination", 110410.9, 1.18),
    "ttucb": ReleasedOutput("ttucb", 709560.6, 243.9),
})
