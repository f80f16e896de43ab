"""One Parquet file holding columns and a JSON manifest: the file format of the run cache
(:mod:`bai_lib.runcache`) and of the cached computations (:mod:`bai_lib.memo`).

Orchestration layer, below both. Files are written atomically (a hidden temporary file, then a
rename) with zstd compression and no statistics, so equal contents give equal bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

__all__ = ["MANIFEST_KEY", "pyarrow_modules", "hash_arrays", "write_table", "read_table"]

#: Key of the manifest in a file's Parquet metadata.
MANIFEST_KEY = b"bai_lib.runcache"


def pyarrow_modules():
    """``(pyarrow, pyarrow.parquet)``, or an ImportError saying which extra installs them."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as err:  # pragma: no cover - the extras install it
        raise ImportError("the run cache needs pyarrow: pip install 'bai_lib[book]'") from err
    return pa, pq


def hash_arrays(arrays: dict, prefix: str = "") -> str:
    """SHA-256 of ``prefix`` and of each array's name, dtype, shape and bytes, by name."""
    h = hashlib.sha256(prefix.encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def write_table(path: Path, columns: dict, manifest: dict) -> None:
    """Write ``columns`` (1-d arrays of one length) with ``manifest`` to ``path``."""
    pa, pq = pyarrow_modules()
    table = pa.table(columns)
    table = table.replace_schema_metadata({MANIFEST_KEY: json.dumps(manifest, sort_keys=True)})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp, compression="zstd", compression_level=9, write_statistics=False)
    os.replace(tmp, path)


def read_table(path: Path) -> tuple[dict, dict, int]:
    """The columns (numpy arrays), the manifest and the number of rows of a file.

    Raises
    ------
    ValueError
        Saying ``"is not readable (<the error's type>)"`` for a file that is not such a table.
    """
    pa, pq = pyarrow_modules()
    try:
        table = pq.read_table(path)
        manifest = json.loads(table.schema.metadata[MANIFEST_KEY])
        columns = {c: table.column(c).to_numpy() for c in table.column_names}
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as err:
        raise ValueError(f"is not readable ({type(err).__name__})") from None
    return columns, manifest, table.num_rows
