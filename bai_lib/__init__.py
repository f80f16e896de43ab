"""bai_lib: computations for *Fixed Confidence Best Arm Identification in the Bayesian Setting*.

Layers
------
- math: :mod:`bai_lib.priors` (prior, ``L(H)``, volume lemma, ``Δ0``), :mod:`bai_lib.bounds`
- kernels: :mod:`bai_lib.kernels` (numba simulators) on :mod:`bai_lib._rng`
- orchestration: :mod:`bai_lib.simulate`, :mod:`bai_lib.experiments`
- presentation: :mod:`bai_lib.plotting`; published numbers: :mod:`bai_lib.published`
"""

from .priors import GaussianPrior, delta0

__all__ = ["GaussianPrior", "delta0", "simulate", "SimulationResult", "bounds", "published"]

__version__ = "0.1.0"


def __getattr__(name):
    # Heavy submodules (numba kernels) load on first use, so that importing the
    # math layer stays cheap.
    if name in ("simulate", "SimulationResult"):
        import importlib

        _sim = importlib.import_module(".simulate", __name__)
        # importing the submodule binds ``bai_lib.simulate`` to the module; rebind the
        # public names to the function and class
        globals()["simulate"] = _sim.simulate
        globals()["SimulationResult"] = _sim.SimulationResult
        return globals()[name]
    if name in ("bounds", "published", "plotting", "experiments"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'bai_lib' has no attribute {name!r}")
