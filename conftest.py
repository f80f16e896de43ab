"""Test-session settings shared by unit tests and nbval.

Notebook kernels started by nbval inherit this environment: progress bars stay off so
that nothing variable reaches the compared outputs.
"""

import os

os.environ["BAI_LIB_PROGRESS"] = "0"
