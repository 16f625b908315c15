"""headspace.safetensors_file against the safetensors package's own numpy loader and writer, and on bad files."""

import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from headspace.safetensors_file import BytesSource, FileSource, SafetensorsFile, to_bytes, write


def tensors(seed=0):
    rng = np.random.default_rng(seed)
    return {"h.0.attn.c_attn.weight": rng.standard_normal((8, 24)).astype(np.float32),
            "h.0.ln_1.weight": rng.standard_normal(8).astype(np.float16),
            "wpe.weight": rng.standard_normal((5, 8)).astype(np.float64),
            "position_ids": np.arange(5, dtype=np.int64).reshape(1, 5),
            "empty": np.zeros((0, 3), np.float32)}


def test_reads_what_the_safetensors_package_wrote(tmp_path):
    path = tmp_path / "model.safetensors"
    want = tensors()
    save_file(want, str(path), metadata={"format": "pt"})
    f = SafetensorsFile(FileSource(path))
    theirs = load_file(str(path))
    assert sorted(f.names) == sorted(theirs)
    assert f.metadata == {"format": "pt"}
    for name in ("h.0.attn.c_attn.weight", "h.0.ln_1.weight", "empty"):
        ours = f.tensor(name)
        assert ours.dtype == np.float32 and ours.shape == theirs[name].shape
        np.testing.assert_array_equal(ours, theirs[name].astype(np.float32))   # F16 widening is exact
    with pytest.raises(ValueError, match=r"'position_ids' has dtype I64; supported are F32, F16, BF16"):
        f.tensor("position_ids")
    with pytest.raises(ValueError, match=r"'wpe.weight' has dtype F64"):
        f.tensor("wpe.weight")


def test_the_safetensors_package_reads_what_we_write(tmp_path):
    rng = np.random.default_rng(1)
    ours = {"a": rng.standard_normal((3, 4)).astype(np.float32), "b": rng.standard_normal(7).astype(np.float32)}
    write(tmp_path / "x.safetensors", ours, dtypes={"b": "F16"}, metadata={"who": "test"})
    theirs = load_file(str(tmp_path / "x.safetensors"))
    np.testing.assert_array_equal(theirs["a"], ours["a"])
    np.testing.assert_array_equal(theirs["b"], ours["b"].astype(np.float16))


def test_bfloat16_is_the_top_half_of_float32_rounded_to_nearest_even():
    x = np.array([1.0, -2.5, 3.14159265, 1e-3, 65504.0, 1 + 2**-8, 1 + 3 * 2**-8], np.float32)
    back = SafetensorsFile(BytesSource(to_bytes({"x": x}, {"x": "BF16"}))).tensor("x")
    # bfloat16 keeps 8 significant bits: every value within half a unit in the last place of 2^-8
    np.testing.assert_allclose(back, x, rtol=2**-8)
    assert back[0] == 1.0 and back[1] == -2.5                  # exactly representable: exact
    assert back[5] == 1.0 and back[6] == 1 + 4 * 2**-8         # ties to even, both ways
    bits = back.view(np.uint32)
    assert np.all(bits & 0xFFFF == 0)


def test_only_the_asked_tensor_is_read(tmp_path):
    path = tmp_path / "m.safetensors"
    save_file(tensors(), str(path))
    f = SafetensorsFile(FileSource(path))
    header = f.data_start
    assert f.bytes_read == header
    f.tensor("h.0.ln_1.weight")
    assert f.bytes_read == header + 8 * 2
    assert f.bytes_read <= path.stat().st_size - f.nbytes("h.0.attn.c_attn.weight")   # the big tensor unread


# --------------------------------------------------------------------------- bad files

def good_bytes():
    return to_bytes({"a": np.ones((4, 4), np.float32), "b": np.ones(8, np.float32)})


def header_of(data):
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + n]), data[8 + n:]


def with_header(header, body):
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + body


@pytest.mark.parametrize("data, message", [
    (b"PK\x03\x04 this is a zip archive, not a safetensors file at all", r"^not a safetensors file: its first 8 bytes"),
    (b"abc", r"^not a safetensors file: the file is 3 bytes, shorter than the 8-byte header length"),
    ((12).to_bytes(8, "little") + b"not json!!!!", r"^not a safetensors file: the 12 bytes after the length are not a JSON header"),
    ((2).to_bytes(8, "little") + b"[]", r"^not a safetensors file: its header is JSON but not an object"),
])
def test_not_a_safetensors_file(data, message):
    with pytest.raises(ValueError, match=message):
        SafetensorsFile(BytesSource(data), name="the file")


def test_truncated_in_the_data_and_in_the_header():
    data = good_bytes()
    with pytest.raises(ValueError, match=r"is truncated: its header places data up to byte 96 after the header, "
                                         r"but the file has 90 bytes of data .* 6 missing"):
        SafetensorsFile(BytesSource(data[:-6]))
    n = int.from_bytes(data[:8], "little")
    with pytest.raises(ValueError, match=rf"is truncated: its header is {n} bytes but the file has only 20"):
        SafetensorsFile(BytesSource(data[:28]))


@pytest.mark.parametrize("change, message", [
    (lambda h: h["a"].update(data_offsets=[0, 60]), r"lies about tensor 'a': shape \[4, 4\] of F32 needs 64 bytes, its data_offsets \[0, 60\] span 60"),
    (lambda h: h["b"].update(data_offsets=[32, 64]), r"lies about its offsets: tensors 'a' \[0, 64\) and 'b' \[32, 64\) overlap"),
    (lambda h: h["a"].update(data_offsets=[64, 0]), r"data_offsets must be \[begin, end\] with 0 <= begin <= end; got \[64, 0\]"),
    (lambda h: h["a"].update(shape=[4, -4]), r"shape must be a list of non-negative integers; got \[4, -4\]"),
    (lambda h: h["a"].pop("dtype"), r"lies about tensor 'a': expected an object with dtype, shape and data_offsets"),
    (lambda h: h["a"].update(dtype="F128"), r"unknown dtype 'F128'"),
])
def test_a_header_that_lies(change, message):
    header, body = header_of(good_bytes())
    change(header)
    with pytest.raises(ValueError, match=message):
        SafetensorsFile(BytesSource(with_header(header, body)), name="m.safetensors")


def test_a_source_that_returns_short_reads_is_truncated():
    data = good_bytes()

    class Short(BytesSource):
        def read(self, offset, length):
            return super().read(offset, length)[:max(0, length - 1)] if offset > 100 else super().read(offset, length)

    f = SafetensorsFile(Short(data))
    with pytest.raises(ValueError, match=r"is truncated: tensor 'b' needs bytes"):
        f.tensor("b")
