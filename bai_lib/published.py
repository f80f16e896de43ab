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

from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["PublishedRow", "TABLES", "EXPERIMENTS", "row"]


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

#: Settings of the two experiments (Section 6): standard normal prior with ``k`` arms.
EXPERIMENTS = MappingProxyType(
    {
        1: MappingProxyType(dict(k=2, noise_std=1.0, delta=0.1, n_runs=1000, tables=(1, 3),
                                 algorithms=("elimination", "ttts", "ttucb"))),
        2: MappingProxyType(dict(k=10, noise_std=1.0, delta=0.01, n_runs=1000, tables=(2, 4),
                                 algorithms=("elimination", "noelim"))),
    }
)


def row(table: int, algorithm: str) -> PublishedRow:
    """Return the published row, with a clear error for an unknown table or algorithm."""
    if table not in TABLES:
        raise ValueError(f"table must be one of {sorted(TABLES)}, got {table!r}")
    if algorithm not in TABLES[table]:
        raise ValueError(
            f"algorithm must be one of {sorted(TABLES[table])} for table {table}, got {algorithm!r}"
        )
    return TABLES[table][algorithm]
