"""Reward families: everything that differs between Gaussian and Bernoulli arms in the loops.

* ``gaussian``: the bundle :class:`~bai_lib.families.gaussian.Gaussian`, the module
  :mod:`bai_lib.families.gaussian`;
* ``bernoulli``: the bundle :class:`~bai_lib.families.bernoulli.Bernoulli`, the module
  :mod:`bai_lib.families.bernoulli`.

A family is chosen once, when a specification binds, by building its bundle
(:func:`family_bundle`); the compiled loops call the generic functions of
:mod:`bai_lib.families.family`, which the compiler resolves to the family's own.
"""

from __future__ import annotations

from .bernoulli import Bernoulli
from .gaussian import Gaussian

__all__ = ["Gaussian", "Bernoulli", "FAMILIES", "family_bundle"]

#: The bundle class of each reward model (the ``rewards`` argument of the simulators).
FAMILIES = {"gaussian": Gaussian, "bernoulli": Bernoulli}


def family_bundle(rewards: str) -> Gaussian | Bernoulli:
    """The bundle of the reward model ``rewards`` (a key of :data:`FAMILIES`)."""
    return FAMILIES[rewards]()
