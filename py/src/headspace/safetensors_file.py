"""Safetensors files read tensor by tensor, through a byte-range source, with numpy only.

The format: 8 bytes (little-endian unsigned length ``n``), ``n`` bytes of JSON (each tensor's
``dtype``, ``shape`` and ``data_offsets [begin, end)`` into the data, plus an optional
``__metadata__``), then the data. The header is parsed here directly, not by the ``safetensors``
package, so the same code runs in the browser (Pyodide) and natively, and so a file is never held
whole: ``SafetensorsFile.tensor(name)`` reads that tensor's bytes and no others. A *source* is
anything with ``read(offset, length) -> bytes``: ``FileSource`` reads a file on disk, the page's
worker reads ``File.slice`` ranges of the reader's file, ``BytesSource`` wraps bytes in memory.

Floating tensors (``F32``, ``F16``, ``BF16``) come back as float32 (the half types widened,
exactly); any other dtype raises when it is read, not when the header is, since a checkpoint may
hold integer buffers that nothing here needs. Every way a file can be bad is a ``ValueError``
naming it: not a safetensors file, truncated, a header whose offsets lie, an unsupported dtype.

>>> import numpy as np
>>> data = to_bytes({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, dtypes={"w": "BF16"})
>>> f = SafetensorsFile(BytesSource(data))
>>> f.names, f.dtype("w"), f.shape("w")
(['w'], 'BF16', (2, 3))
>>> f.tensor("w").tolist(), f.bytes_read, len(data)   # header (8 + 64 bytes) and this tensor's 12
([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], 84, 84)
>>> SafetensorsFile(BytesSource(b"hello, world")).names
Traceback (most recent call last):
...
ValueError: not a safetensors file: its first 8 bytes give a header of 8583909746840200552 bytes, more than the file's 12 (a safetensors file starts with the length of its JSON header)
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

__all__ = ["FileSource", "BytesSource", "SafetensorsFile", "ITEMSIZE", "FLOAT_DTYPES", "to_bytes", "write"]

#: Bytes per element of every dtype the format defines (the header's lengths are checked with it).
ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
            "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
#: The dtypes read (widened to float32).
FLOAT_DTYPES = ("F32", "F16", "BF16")
#: The format's own limit on the header (the safetensors package refuses larger ones).
MAX_HEADER = 100_000_000


class FileSource:
    """Byte ranges of a file on disk: ``read(offset, length)``; ``size`` its length in bytes."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.size = os.path.getsize(self.path)

    def read(self, offset: int, length: int) -> bytes:
        with open(self.path, "rb") as f:
            f.seek(offset)
            return f.read(length)


class BytesSource:
    """Byte ranges of bytes in memory (tests, and small files)."""

    def __init__(self, data: bytes):
        self.data = memoryview(bytes(data))
        self.size = len(self.data)

    def read(self, offset: int, length: int) -> bytes:
        return bytes(self.data[offset:offset + length])


class SafetensorsFile:
    """One safetensors file's header, parsed and checked; tensors read one at a time on request.

    ``source`` has ``read(offset, length)``; ``size`` is the file's length in bytes (default
    ``source.size``); ``name`` is how messages call the file. ``bytes_read`` counts the bytes
    read so far, header included.
    """

    def __init__(self, source, size: int | None = None, name: str = "the file"):
        self.source, self.name = source, name
        self.size = int(source.size if size is None else size)
        self.bytes_read = 0
        self.entries, self.metadata, self.data_start = self._header()

    @property
    def names(self) -> list[str]:
        return list(self.entries)

    def __contains__(self, name: str) -> bool:
        return name in self.entries

    def dtype(self, name: str) -> str:
        return self._entry(name)["dtype"]

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self._entry(name)["shape"])

    def nbytes(self, name: str) -> int:
        begin, end = self._entry(name)["data_offsets"]
        return end - begin

    def tensor(self, name: str) -> np.ndarray:
        """The tensor ``name`` as a float32 array of its shape (F16 and BF16 widened exactly)."""
        entry = self._entry(name)
        dtype = entry["dtype"]
        if dtype not in FLOAT_DTYPES:
            raise ValueError(f"{self.name}: tensor {name!r} has dtype {dtype}; supported are "
                             f"{', '.join(FLOAT_DTYPES)} (floating point, read as float32)")
        begin, end = entry["data_offsets"]
        raw = self._read(self.data_start + begin, end - begin)
        if len(raw) != end - begin:
            raise ValueError(f"{self.name} is truncated: tensor {name!r} needs bytes {self.data_start + begin} to "
                             f"{self.data_start + end}, only {len(raw)} of them could be read")
        if dtype == "F32":
            arr = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif dtype == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:                                            # bfloat16: the top half of a float32
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        return arr.reshape(entry["shape"])

    # ----------------------------------------------------------------------- private

    def _read(self, offset: int, length: int) -> bytes:
        raw = bytes(self.source.read(offset, length))
        self.bytes_read += len(raw)
        return raw

    def _entry(self, name: str) -> dict:
        if name not in self.entries:
            raise ValueError(f"{self.name} has no tensor {name!r}")
        return self.entries[name]

    def _header(self):
        what = "a safetensors file starts with the length of its JSON header"
        if self.size < 8:
            raise ValueError(f"not a safetensors file: {self.name} is {self.size} bytes, shorter than the "
                             f"8-byte header length ({what})")
        n = int.from_bytes(self._read(0, 8), "little")
        if n > self.size - 8 and n > MAX_HEADER:
            raise ValueError(f"not a safetensors file: its first 8 bytes give a header of {n} bytes, more than "
                             f"the file's {self.size} ({what})")
        if n > self.size - 8:
            raise ValueError(f"{self.name} is truncated: its header is {n} bytes but the file has only "
                             f"{self.size - 8} after the length")
        raw = self._read(8, n)
        if len(raw) != n:
            raise ValueError(f"{self.name} is truncated: only {len(raw)} of its {n} header bytes could be read")
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ValueError(f"not a safetensors file: the {n} bytes after the length are not a JSON header "
                             f"(they start {raw[:24]!r})") from None
        if not isinstance(header, dict):
            raise ValueError(f"not a safetensors file: its header is JSON but not an object; got "
                             f"{type(header).__name__}")
        metadata = header.pop("__metadata__", None) or {}
        entries, spans = {}, []
        for key, entry in header.items():
            entries[key] = self._check(key, entry)
            spans.append((*entries[key]["data_offsets"], key))
        data = self.size - 8 - n
        spans.sort()
        for (b0, e0, k0), (b1, e1, k1) in zip(spans, spans[1:]):
            if b1 < e0:
                raise ValueError(f"{self.name}'s header lies about its offsets: tensors {k0!r} [{b0}, {e0}) and "
                                 f"{k1!r} [{b1}, {e1}) overlap")
        end = max((e for _, e, _ in spans), default=0)
        if end > data:
            raise ValueError(f"{self.name} is truncated: its header places data up to byte {end} after the "
                             f"header, but the file has {data} bytes of data ({self.size} in all; "
                             f"{end - data} missing)")
        return entries, metadata, 8 + n

    def _check(self, key, entry) -> dict:
        lies = f"{self.name}'s header lies about tensor {key!r}"
        if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= set(entry):
            raise ValueError(f"{lies}: expected an object with dtype, shape and data_offsets; got {entry!r:.120}")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in ITEMSIZE:
            raise ValueError(f"{lies}: unknown dtype {dtype!r} (the format defines {', '.join(ITEMSIZE)})")
        if (not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                   for s in shape)):
            raise ValueError(f"{lies}: shape must be a list of non-negative integers; got {shape!r}")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]):
            raise ValueError(f"{lies}: data_offsets must be [begin, end] with 0 <= begin <= end; got {offsets!r}")
        want = math.prod(shape) * ITEMSIZE[dtype]
        if offsets[1] - offsets[0] != want:
            raise ValueError(f"{lies}: shape {shape} of {dtype} needs {want} bytes, its data_offsets "
                             f"{offsets} span {offsets[1] - offsets[0]}")
        return {"dtype": dtype, "shape": shape, "data_offsets": offsets}


# --------------------------------------------------------------------------- writing (tests, benches)

def to_bytes(tensors: dict, dtypes: dict | None = None, metadata: dict | None = None) -> bytes:
    """A safetensors file of ``tensors`` (name -> float array) as bytes, each stored as F32 unless
    ``dtypes[name]`` says F16 or BF16 (bfloat16 rounded to nearest even). For tests and benches:
    checkpoints with real names and shapes, written without torch."""
    dtypes = dtypes or {}
    header, chunks, at = {}, [], 0
    for name, value in tensors.items():
        arr = np.ascontiguousarray(value, dtype=np.float32)
        dtype = dtypes.get(name, "F32")
        if dtype == "F32":
            raw = arr.astype("<f4").tobytes()
        elif dtype == "F16":
            raw = arr.astype("<f2").tobytes()
        elif dtype == "BF16":
            bits = arr.view(np.uint32).astype(np.uint64)
            raw = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()
        else:
            raise ValueError(f"dtypes[{name!r}] must be one of {FLOAT_DTYPES}; got {dtype!r}")
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [at, at + len(raw)]}
        chunks.append(raw)
        at += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)                      # the format pads the header to 8 bytes
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


def write(path, tensors: dict, dtypes: dict | None = None, metadata: dict | None = None) -> int:
    """Write ``to_bytes(tensors, dtypes, metadata)`` to ``path``; returns the bytes written."""
    data = to_bytes(tensors, dtypes, metadata)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)
