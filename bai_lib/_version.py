"""The package's one version string: ``bai_lib.__version__``, the wheel's version and
``bai-lib --version``."""

VERSION = "0.1.0"
