"""A sampling rule written as a user would write one, in an importable module, for the benchmarks.

``@njit(cache=True)`` keeps its compiled code on disk next to this file, as for the library's
own kernels, so a second process loads it instead of compiling it.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def least_sampled(t, N, S, noise_stds, state):
    """Sample the arm with the fewest samples (the first of them on a tie): uniform
    allocation."""
    return np.argmin(N)
