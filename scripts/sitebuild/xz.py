"""The runtime's largest files compressed with xz, which the worker decodes as they arrive.

Why: on a slow link the bytes before Python is live are the wait (decision 0011). The host's
own compression is out of our hands (the wasm is gzipped, zips go as they are), and the browser
inflates only gzip and deflate itself; xz at its strongest preset sends the runtime's five largest
files in about two thirds of the bytes, decoded in the worker by a small WebAssembly decoder from
npm (xz-decompress, bundled into the worker). A zip archive is first rewritten with every entry
stored (zip's method 0), so that one xz stream runs over the whole archive and finds the repeats
between its files, which zip's per-file deflate cannot.

Deterministic: the same input gives the same bytes (the archive's entries keep their names, order
and dates; liblzma's output depends only on its input and settings), and each result is cached by
the sha256 of its input.

>>> import io, zipfile
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
...     z.writestr("a.py", "x = 1\\n" * 100)
>>> [i.compress_type for i in zipfile.ZipFile(io.BytesIO(stored(buf.getvalue()))).infolist()]
[0]
>>> lzma.decompress(compress(b"abc" * 1000)) == b"abc" * 1000
True
"""

from __future__ import annotations

import hashlib
import io
import lzma
import zipfile
from pathlib import Path

# xz's check: CRC32, which the decoder (xz-embedded inside xz-decompress) verifies; the bytes
# fetched are checked against the site lockfile's sha256 as well.
CHECK = lzma.CHECK_CRC32
PRESET = 9 | lzma.PRESET_EXTREME
# A dictionary larger than the input buys nothing and makes the decoder allocate it: the smallest
# power of two that holds the input (at least 1 MiB, at most preset 9's 64 MiB). Same output size
# as preset 9's 64 MiB on every runtime file (measured), a quarter of the decoder's memory.
MIN_DICT, MAX_DICT = 1 << 20, 1 << 26


def dict_size(n: int) -> int:
    """The dictionary for an input of ``n`` bytes.

    >>> dict_size(10), dict_size(3_190_636), dict_size(10_105_545)
    (1048576, 4194304, 16777216)
    """
    return min(MAX_DICT, max(MIN_DICT, 1 << max(0, n - 1).bit_length()))


def compress(data: bytes) -> bytes:
    """``data`` as one xz stream (preset 9e, CRC32)."""
    filters = [{"id": lzma.FILTER_LZMA2, "preset": PRESET, "dict_size": dict_size(len(data))}]
    return lzma.compress(data, format=lzma.FORMAT_XZ, check=CHECK, filters=filters)


def stored(archive: bytes) -> bytes:
    """The zip ``archive`` with every entry stored (method 0): same names, order, dates and bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            info.compress_type = zipfile.ZIP_STORED
            dst.writestr(info, data)
    return out.getvalue()


def cached(data: bytes, cache: Path) -> bytes:
    """``compress(data)``, kept in ``cache`` under the sha256 of ``data`` (xz -9e takes seconds per MB)."""
    path = cache / "xz" / f"{hashlib.sha256(data).hexdigest()}-{PRESET}-{CHECK}.xz"
    if path.exists():
        return path.read_bytes()
    out = compress(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_bytes(out)
    tmp.replace(path)
    return out
