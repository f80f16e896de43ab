"""Empirical Bayes: a Beta prior over Bernoulli success rates, fitted to past experiments.

The beta-binomial model of a history of ``m`` past campaigns: campaign ``j`` had a success rate
:math:`p_j \\sim \\mathrm{Beta}(a, b)`, independently, and :math:`x_j \\mid p_j \\sim
\\mathrm{Binomial}(n_j, p_j)` successes out of ``n_j`` trials. With ``p_j`` integrated out,

.. math:: P(x_j) = \\binom{n_j}{x_j} \\frac{B(x_j + a, n_j - x_j + b)}{B(a, b)};

with the mean :math:`\\mu = a/(a+b)` and the intra-class correlation :math:`\\rho = 1/(a+b+1)`,
:math:`E[x_j] = n_j\\mu` and :math:`\\mathrm{Var}[x_j] = n_j\\mu(1-\\mu)[1 + (n_j-1)\\rho]`:
the campaigns' proportions vary more than binomial sampling alone explains (over-dispersion).

:func:`fit_beta_prior` estimates ``(a, b)`` by the method of moments or by maximum likelihood;
:meth:`BetaFit.prior` turns the fit into a :class:`~bai_lib.BetaPrior` for ``k`` new arms;
:func:`synthetic_history` draws a history from the model.
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize
from scipy.special import betaln, digamma, gammaln, polygamma

from . import _validate as V
from .beta_prior import BetaPrior

__all__ = ["BetaFit", "fit_beta_prior", "synthetic_history"]

_METHODS = ("moments", "ml")
_GTOL = 1e-10     # gradient norm of the log-likelihood per campaign in (log a, log b)
_ACCEPT = 1e-8    # largest such gradient norm accepted
_MAX_SUM = 1e10   # a fitted a + b beyond this is the a + b = inf boundary
_FLAT = "successes: no over-dispersion between campaigns"


@dataclass(frozen=True)
class BetaFit:
    """A fitted prior :math:`\\mathrm{Beta}(a, b)` over success rates.

    Attributes
    ----------
    a, b : float
        The Beta parameters.
    method : str
        ``"moments"`` or ``"ml"``.
    n_campaigns : int
        Number ``m`` of past campaigns fitted.
    loglik : float
        Beta-binomial log-likelihood of the history at ``(a, b)``, binomial coefficients included.
    """

    a: float
    b: float
    method: str
    n_campaigns: int
    loglik: float

    @property
    def mean(self) -> float:
        """Prior mean :math:`a/(a+b)`."""
        return self.a / (self.a + self.b)

    @property
    def std(self) -> float:
        """Prior standard deviation :math:`\\sqrt{ab/((a+b)^2(a+b+1))}`."""
        s = self.a + self.b
        return math.sqrt(self.a * self.b / (s * s * (s + 1.0)))

    def prior(self, k: int) -> BetaPrior:
        """The prior :math:`\\mathrm{Beta}(a, b)` on each of ``k`` arms.

        Parameters
        ----------
        k : int
            Number of arms, ``k >= 2``.

        Returns
        -------
        BetaPrior
            ``BetaPrior([a] * k, [b] * k)``.

        Raises
        ------
        ValueError
            Naming ``k`` if it is not an integer ``>= 2`` or its ``16 k`` bytes exceed
            ``MAX_BYTES`` of ``bai_lib._validate`` (as :meth:`bai_lib.BetaPrior.uniform`); ``a``, ``b``
            outside ``PARAM_RANGE``.
        """
        k = V.integer(k, "k", 2, V.MAX_BYTES // 16)
        return BetaPrior([self.a] * k, [self.b] * k)


#: Largest count of successes or trials accepted: ``2**53``, the last of the run of whole
#: numbers a double holds exactly (the fits also square the trials, well within range there).
MAX_COUNT = 2.0**53


def _counts(values, name: str) -> np.ndarray:
    """``values`` as a float vector of at least two non-negative integers."""
    arr = V.reals(values, name, max_ndim=None)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must be a one-dimensional sequence of at least 2 campaigns, "
                         f"got {reprlib.repr(values)}")
    if np.any(arr != np.floor(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative integers, got {reprlib.repr(values)}")
    if np.any(arr > MAX_COUNT):
        raise ValueError(f"{name} must hold counts up to 2**53 (whole numbers a double holds "
                         f"exactly, and whose squares the fits can form), got "
                         f"{reprlib.repr(values)}")
    return arr


def _moments(x: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` by Kleinman's weighted method of moments (see :func:`fit_beta_prior`)."""
    big_n, m = n.sum(), x.sum() / n.sum()
    s = np.sum(n * (x / n - m) ** 2)
    rho = (s / (m * (1.0 - m)) - (x.size - 1)) / (big_n - np.sum(n * n) / big_n - (x.size - 1))
    if not rho > 0:
        raise ValueError(f"{_FLAT} (method of moments: rho = {rho:.3g} <= 0, the proportions "
                         f"vary no more than binomial sampling explains)")
    if not rho < 1:
        raise ValueError(f"successes: the proportions vary too much for the method of moments "
                         f"(rho = {rho:.3g} >= 1, so a + b <= 0)")
    total = 1.0 / rho - 1.0
    return float(m * total), float((1.0 - m) * total)


def _loglik(a: float, b: float, x, n) -> float:
    """Beta-binomial log-likelihood of the history, binomial coefficients included."""
    return float(np.sum(gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)
                        + betaln(x + a, n - x + b)) - x.size * betaln(a, b))


def _gradient(a, b, x, n):
    """Gradient, and ``(hab, haa, hbb)`` Hessian, of the log-likelihood in ``(a, b)``."""
    y, j, s = n - x, x.size, a + b
    common = digamma(s) - digamma(n + s)
    g = (np.sum(digamma(x + a) + common) - j * digamma(a),
         np.sum(digamma(y + b) + common) - j * digamma(b))
    hab = np.sum(polygamma(1, s) - polygamma(1, n + s))
    return g, (hab, hab + np.sum(polygamma(1, x + a)) - j * polygamma(1, a),
               hab + np.sum(polygamma(1, y + b)) - j * polygamma(1, b))


def _objective(theta, x, n):
    """Minus the log-likelihood per campaign (no constant) at ``(log a, log b)``; gradient."""
    a, b = np.exp(theta)
    (ga, gb), _ = _gradient(a, b, x, n)
    f = np.sum(betaln(x + a, n - x + b)) - x.size * betaln(a, b)
    return -f / x.size, -np.array([a * ga, b * gb]) / x.size


def _hessian(theta, x, n):
    """Hessian of :func:`_objective` (the chain rule of ``log``)."""
    a, b = np.exp(theta)
    (ga, gb), (hab, haa, hbb) = _gradient(a, b, x, n)
    return -np.array([[a * a * haa + a * ga, a * b * hab],
                      [a * b * hab, b * b * hbb + b * gb]]) / x.size


def _ml(x: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` maximising the beta-binomial likelihood (see :func:`fit_beta_prior`)."""
    m = x.sum() / n.sum()
    # Tarone's score statistic: the slope of the log-likelihood in 1/(a+b) at a + b = inf
    rho0 = (np.sum((x - n * m) ** 2) / (m * (1.0 - m)) - n.sum()) / np.sum(n * (n - 1.0))
    if not rho0 > 0:
        raise ValueError(f"{_FLAT} (maximum likelihood: the likelihood is largest in the "
                         f"binomial limit a + b = inf; score statistic rho = {rho0:.3g} <= 0)")
    if np.all((x == 0) | (x == n)):
        raise ValueError("successes: every campaign is all-or-nothing (x_j = 0 or n_j), the "
                         "likelihood grows without bound as a, b -> 0")
    try:
        start = _moments(x, n)
    except ValueError:  # start from the score statistic's estimate of rho instead
        total = 1.0 / min(rho0, 0.5) - 1.0
        start = (m * total, (1.0 - m) * total)
    with np.errstate(over="ignore", invalid="ignore"):
        res = minimize(_objective, np.log(start), args=(x, n), jac=True, hess=_hessian,
                       method="trust-exact", options={"gtol": _GTOL, "maxiter": 500})
        theta, grad = res.x, res.jac
        for _ in range(4):  # Newton steps on the exact gradient, below the rounding of f
            hess = _hessian(theta, x, n)
            if not (np.linalg.norm(grad) > _GTOL and np.all(np.linalg.eigvalsh(hess) > 0)):
                break
            theta = theta - np.linalg.solve(hess, grad)
            grad = _objective(theta, x, n)[1]
    a, b = (float(v) for v in np.exp(theta))
    if np.all(np.isfinite(theta)) and a + b > _MAX_SUM:
        raise ValueError(f"{_FLAT} (maximum likelihood: a + b = {a + b:.3g} diverges)")
    if not (np.all(np.isfinite(theta)) and np.linalg.norm(grad) <= _ACCEPT):
        raise ValueError(f"successes: the maximum-likelihood fit did not converge "
                         f"({res.message}; gradient norm {np.linalg.norm(grad):.3g})")
    return a, b


def fit_beta_prior(successes: ArrayLike, trials: ArrayLike, *, method: str = "ml") -> BetaFit:
    """Fit a prior :math:`\\mathrm{Beta}(a, b)` over success rates to past campaigns.

    Under the beta-binomial model of the module docstring, with ``x_j = successes[j]``,
    ``n_j = trials[j]``, ``N = Σ n_j`` and ``m`` campaigns:

    - ``"moments"``: Kleinman's weighted method of moments. The pooled mean
      :math:`\\hat\\mu = \\sum x_j / N` and the weighted spread
      :math:`S = \\sum_j n_j (x_j/n_j - \\hat\\mu)^2` of the proportions, whose expectation
      (the estimated mean :math:`\\hat\\mu` accounted for) is exactly
      :math:`E[S] = \\mu(1-\\mu)[(m-1) + \\rho D]` with :math:`D = N - \\sum n_j^2/N - (m-1)`,
      give :math:`\\hat\\rho = (S/(\\hat\\mu(1-\\hat\\mu)) - (m-1)) / D`, then
      :math:`a + b = 1/\\hat\\rho - 1`, :math:`a = \\hat\\mu(a+b)`, :math:`b = (1-\\hat\\mu)(a+b)`.
      With equal trials ``n`` this is the textbook estimator matching :math:`n\\hat\\mu` and the
      sample variance :math:`s^2` (``ddof=1``) of the ``x_j``:
      :math:`a + b = (n - r)/(r - 1)` with :math:`r = s^2/(n\\hat\\mu(1-\\hat\\mu))`.
    - ``"ml"``: maximises :math:`\\sum_j \\log P(x_j \\mid n_j, a, b)` over ``(log a, log b)``
      with ``scipy.optimize.minimize`` (``trust-exact``), with the analytic gradient

      .. math::

         \\partial_a \\ell = \\sum_j [\\psi(x_j+a) - \\psi(a)] - c,

         c = \\sum_j [\\psi(n_j+a+b) - \\psi(a+b)],

      the same for ``b`` with ``n_j - x_j``, and the trigamma Hessian, from the moments estimate
      (else Tarone's score estimate of ``ρ``), polished by Newton steps to a gradient norm of
      ``1e-10`` per campaign. The boundary ``a + b = ∞`` (no over-dispersion) is detected by
      Tarone's score :math:`\\sum_j (x_j - n_j\\hat\\mu)^2/(\\hat\\mu(1-\\hat\\mu)) - N \\le 0`
      (the likelihood does not grow away from it) and by a fitted ``a + b > 1e10``.

    Parameters
    ----------
    successes, trials : array_like of int
        Successes ``x_j`` and trials ``n_j >= 1`` of ``m >= 2`` past campaigns, ``x_j <= n_j``
        (integer-valued floats such as ``3.0`` are accepted).
    method : {"ml", "moments"}, optional
        Estimator, maximum likelihood by default.

    Returns
    -------
    BetaFit
        The fitted ``a``, ``b``, the method, the number of campaigns and the log-likelihood.

    Raises
    ------
    ValueError
        Naming ``successes`` or ``trials``: not 1-D, unequal lengths, under 2 campaigns, values
        not finite, not integers or negative, trials below 1, successes above trials, all
        trials 1 (no identifiable over-dispersion), no successes or only successes. Naming
        ``method`` if unknown. Naming ``successes`` for ``no over-dispersion`` between
        campaigns, moments :math:`\\hat\\rho \\ge 1`, all-or-nothing campaigns (``"ml"``) or
        an optimiser failure.
    """
    method = V.choice(method, _METHODS, "method")
    x, n = _counts(successes, "successes"), _counts(trials, "trials")
    if n.size != x.size:
        raise ValueError(f"trials must have the length of successes, got {n.size}, {x.size}")
    if np.any(n < 1):
        raise ValueError(f"trials must all be >= 1, got {reprlib.repr(trials)}")
    if np.any(x > n):
        raise ValueError(f"successes must not exceed trials, got campaign "
                         f"{int(np.argmax(x > n))} with {x[x > n][0]:g} > {n[x > n][0]:g}")
    if np.all(n == 1):
        raise ValueError("trials: all campaigns have 1 trial; over-dispersion is not identifiable")
    if x.sum() == 0 or x.sum() == n.sum():
        raise ValueError("successes: no successes at all, or only successes (prior mean 0 or 1)")
    a, b = _moments(x, n) if method == "moments" else _ml(x, n)
    return BetaFit(a, b, method, int(x.size), _loglik(a, b, x, n))


def synthetic_history(seed: int, n_campaigns: int = 80, a: float = 3.0, b: float = 97.0,
                      visitors: tuple = (1_000, 50_000)) -> tuple[np.ndarray, np.ndarray]:
    """A history of past campaigns drawn from the beta-binomial model: ``(successes, trials)``.

    With ``rng = numpy.random.default_rng(seed)``, in this order: each campaign's number of
    trials, log-uniform between ``visitors[0]`` and ``visitors[1]`` and rounded; its rate from
    ``Beta(a, b)``; its successes from ``Binomial(trials, rate)``. The history of the book's
    conversion chapters is ``synthetic_history(DEFAULT_SEED)``.

    Parameters
    ----------
    seed : int
        Seed of the generator, ``>= 0``.
    n_campaigns : int
        Number of campaigns, ``>= 1``.
    a, b : float
        The Beta law of the campaigns' rates, both ``> 0``.
    visitors : (int, int)
        The least and the largest number of trials of a campaign, ``1 <= low <= high``.
    """
    seed = V.integer(seed, "seed", 0)
    n_campaigns = V.integer(n_campaigns, "n_campaigns", 1)
    a, b = V.positive(a, "a"), V.positive(b, "b")
    if len(visitors) != 2:
        raise ValueError(f"visitors must be a pair (low, high), got {visitors!r}")
    low = V.integer(visitors[0], "visitors", 1)
    high = V.integer(visitors[1], "visitors", low)
    rng = np.random.default_rng(seed)
    log_trials = rng.uniform(np.log(low), np.log(high), n_campaigns)
    trials = np.round(np.exp(log_trials)).astype(int)
    rates = rng.beta(a, b, n_campaigns)
    return rng.binomial(trials, rates), trials
