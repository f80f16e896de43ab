"""Reward families: everything that differs between Gaussian, Bernoulli and Poisson arms.

* ``gaussian``: the bundle :class:`~bai_lib.families.gaussian.Gaussian`, the module
  :mod:`bai_lib.families.gaussian`;
* ``bernoulli``: the bundle :class:`~bai_lib.families.bernoulli.Bernoulli`, the module
  :mod:`bai_lib.families.bernoulli`;
* ``poisson``: the bundle :class:`~bai_lib.families.poisson.Poisson`, the module
  :mod:`bai_lib.families.poisson`.

A family is one module: its compiled functions (the generic functions of
:mod:`bai_lib.families.family`, which the compiler resolves to the family's own) and its
:class:`~bai_lib.families.family.RewardModel` (the prior class, the range of the means, the
default noise level, what the kernels receive). A family is chosen once, when a specification
binds, by :func:`reward_model`.
"""

from __future__ import annotations

from typing import Optional

from . import bernoulli, gaussian, poisson
from .bernoulli import Bernoulli
from .family import RewardModel
from .gaussian import Gaussian
from .poisson import Poisson

__all__ = ["Gaussian", "Bernoulli", "Poisson", "RewardModel", "REWARD_MODELS", "reward_model",
           "model_of_prior", "family_bundle"]

#: Every reward family, by the name the simulators' ``rewards`` argument takes.
REWARD_MODELS: dict[str, RewardModel] = {m.name: m for m in (gaussian.MODEL, bernoulli.MODEL,
                                                                poisson.MODEL)}


def reward_model(rewards: str) -> RewardModel:
    """The family named ``rewards`` (a key of :data:`REWARD_MODELS`); a ``ValueError`` names
    ``rewards`` otherwise."""
    model = REWARD_MODELS.get(rewards) if isinstance(rewards, str) else None
    if model is None:
        raise ValueError(f"rewards must be one of {tuple(REWARD_MODELS)}, got {rewards!r}")
    return model


def model_of_prior(prior: object) -> Optional[RewardModel]:
    """The family whose prior class ``prior`` is an instance of (``None`` if none is)."""
    for model in REWARD_MODELS.values():
        if isinstance(prior, model.prior):
            return model
    return None


def family_bundle(rewards: str) -> Gaussian | Bernoulli | Poisson:
    """The bundle of the reward model ``rewards`` (a key of :data:`REWARD_MODELS`)."""
    return reward_model(rewards).bundle()
