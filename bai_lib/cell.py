"""A cell of a sweep: one configuration of :func:`bai_lib.simulate` over all its runs.

A :class:`Cell` names what one simulation call does (a registered algorithm specification, a
prior of any reward family, noise levels, ``δ``, seed, runs, cap) and round-trips through a
JSON-able description, whose hash is the cell's id in the result store. The prior's class sets
the reward family (:func:`bai_lib.families.model_of_prior`: a Gaussian prior Gaussian rewards, a
Beta prior Bernoulli rewards, a Gamma prior Poisson rewards). It sits below the store and the
sweep, which both read cells (:mod:`bai_lib.store`, :mod:`bai_lib.sweep`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence
from typing import Optional

import numpy as np

from .algorithms import ALGORITHMS, Algorithm
from .beta_prior import BetaPrior
from .families import model_of_prior
from .gamma_prior import GammaPrior
from .plan import RunPlan
from .priors import GaussianPrior

#: The priors with two shape parameters a cell describes by family name (``"beta"``,
#: ``"gamma"``); a Gaussian prior by its means and standard deviations.
SHAPE_PRIORS = {"beta": BetaPrior, "gamma": GammaPrior}

__all__ = ["Cell", "ConfigError", "noise_label", "read_description", "SHAPE_PRIORS"]


class ConfigError(ValueError):
    """A sweep configuration is invalid; the message names the key and the value."""


def _spec_options(spec: Algorithm) -> dict:
    return {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)
            if getattr(spec, f.name) != f.default}


def _jsonable(value, where):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v, where) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, where) for k, v in value.items()}
    raise ConfigError(f"{where}: option value {value!r} cannot be stored in a sweep")


def noise_label(noise_stds: Sequence[float]) -> str:
    """The noise of a cell for a table: ``1`` when every arm has noise 1, ``0.5, 2`` per arm."""
    values = [float(x) for x in noise_stds]
    if len(set(values)) == 1:
        return f"{values[0]:g}"
    return ", ".join(f"{x:g}" for x in values)


def read_description(path: Path) -> dict:
    """The description in a cell's ``cell.json`` in a result store (:meth:`Cell.description`),
    as a dict; an unreadable, truncated or non-object file is refused with a
    :class:`ConfigError` naming it in one line (whether it describes a valid cell is checked by
    :meth:`Cell.from_description`)."""
    try:
        description = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{path}: not readable as JSON ({err}); restore the file or remove "
                          "its directory") from None
    if not isinstance(description, dict):
        raise ConfigError(f"{path}: a cell description is a JSON object, got "
                          f"{type(description).__name__}; restore the file or remove its "
                          "directory")
    return description


@dataclass(frozen=True)
class Cell:
    """One configuration of a sweep: what one :func:`bai_lib.simulate` call over all runs does.

    Attributes
    ----------
    algorithm : Algorithm
        A registered specification (its options must be plain values).
    prior : GaussianPrior, BetaPrior or GammaPrior
        Its class sets the reward family (Gaussian, Bernoulli, Poisson arms).
    noise_stds : tuple of float
    delta : float
    seed : int
    runs : int
    max_samples : int or None
        ``None``: the specification's default cap.
    means : tuple of float or None
        Fixed arm means of every run (the prior is then the one the algorithm is given);
        ``None``: each run's means are drawn from the prior.
    look_every : int
        The stop is checked every ``look_every`` samples (``simulate(..., look_every=...)``;
        1: at every sample).
    """

    algorithm: Algorithm
    prior: GaussianPrior | BetaPrior | GammaPrior
    noise_stds: tuple
    delta: float
    seed: int
    runs: int
    max_samples: Optional[int] = None
    means: Optional[tuple] = None
    look_every: int = 1

    def description(self) -> dict:
        """A JSON-able description from which :meth:`from_description` rebuilds the cell."""
        name = self.algorithm.name
        if ALGORITHMS.get(name) is not type(self.algorithm):
            raise ConfigError(f"algorithm: {self.algorithm!r} is not a registered specification")
        p = self.prior
        if isinstance(p, GaussianPrior):  # the keys of every Gaussian cell, so its id stays
            prior = {"prior_means": [float(x) for x in p.means],
                     "prior_stds": [float(x) for x in p.stds]}
        else:
            prior = {"prior": {"family": self._shape_family, "a": [float(x) for x in p.a],
                               "b": [float(x) for x in p.b]}}
        return {
            "algorithm": name,
            "options": _jsonable(_spec_options(self.algorithm), f"algorithm {name}"),
            "algorithm_label": self.algorithm.label,
            "k": p.k,
            **prior,
            "prior_label": self.prior_label,
            "noise_stds": [float(x) for x in self.noise_stds],
            "delta": float(self.delta),
            "seed": int(self.seed),
            "runs": int(self.runs),
            "max_samples": None if self.max_samples is None else int(self.max_samples),
            # only when set, so that the id of a cell drawing its means never changes
            **({} if self.means is None else {"means": [float(x) for x in self.means]}),
            # likewise: the ids of the cells that look at every sample stay
            **({} if self.look_every == 1 else {"look_every": int(self.look_every)}),
        }

    @property
    def _shape_family(self) -> str:
        return next(name for name, cls in SHAPE_PRIORS.items() if isinstance(self.prior, cls))

    @property
    def rewards(self) -> str:
        """The reward family of the cell's runs, set by its prior's class."""
        return model_of_prior(self.prior).name

    @property
    def prior_label(self) -> str:
        """``N(0, 1)^k`` for the standard prior, else ``custom (k = ...)``; for a Beta or Gamma
        prior with one law for every arm ``Beta(a, b)^k`` or ``Gamma(a, b)^k``, else
        ``Beta, custom (k = ...)``."""
        p = self.prior
        if isinstance(p, GaussianPrior):
            standard = bool(np.all(p.means == 0.0) and np.all(p.stds == 1.0))
            return f"N(0, 1)^{p.k}" if standard else f"custom (k = {p.k})"
        name = type(p).__name__.removesuffix("Prior")
        if np.all(p.a == p.a[0]) and np.all(p.b == p.b[0]):
            return f"{name}({p.a[0]:g}, {p.b[0]:g})^{p.k}"
        return f"{name}, custom (k = {p.k})"

    def plan(self, first: int, stop: int) -> RunPlan:
        """Runs ``first, ..., stop - 1`` of this cell, checked (:class:`~bai_lib.plan.RunPlan`)."""
        return RunPlan.build(self.algorithm, self.prior, np.asarray(self.noise_stds),
                             [self.delta], stop - first, self.seed, first_run=first,
                             max_samples=self.max_samples, means=self.means,
                             look_every=self.look_every)

    @property
    def means_label(self) -> str:
        """``prior`` when each run draws its means, else the fixed means (``1, 0.5, 0``)."""
        return "prior" if self.means is None else ", ".join(f"{x:g}" for x in self.means)

    @property
    def id(self) -> str:
        """A 12-hex-digit hash of the description (labels excluded), so that the same cell
        always gets the same id, in any sweep."""
        d = {key: v for key, v in self.description().items() if not key.endswith("_label")}
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]

    @classmethod
    def from_description(cls, d: dict) -> "Cell":
        """The cell that :meth:`description` describes (its inverse)."""
        spec = ALGORITHMS[d["algorithm"]](**d["options"])
        shaped = d.get("prior")
        prior = (GaussianPrior(d["prior_means"], d["prior_stds"]) if shaped is None
                 else SHAPE_PRIORS[shaped["family"]](shaped["a"], shaped["b"]))
        return cls(spec, prior,
                   tuple(d["noise_stds"]), d["delta"], d["seed"], d["runs"], d["max_samples"],
                   None if d.get("means") is None else tuple(d["means"]),
                   int(d.get("look_every", 1)))
