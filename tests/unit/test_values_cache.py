"""sitebuild.values.compute_cached: the build's values and the tests' are one computation, computed
again whenever anything they are computed from changes."""

from sitebuild import values


def _tree(tmp_path):
    for top in values.SOURCES:
        path = tmp_path / top
        if path.suffix:  # a file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x = 1\n")
        else:
            path.mkdir(parents=True, exist_ok=True)
            (path / "a.py").write_text("x = 1\n")
    return tmp_path


def test_a_second_call_reads_what_the_first_computed(tmp_path, monkeypatch):
    monkeypatch.setattr(values, "ROOT", _tree(tmp_path / "src"))
    monkeypatch.setattr(values, "CACHE", tmp_path / "cache")
    calls = []
    out = {"primer": {"a": 0.1 + 0.2, "b": 768, "c": "L1H0", "d": 7.0e-07}}
    monkeypatch.setattr(values, "compute", lambda: calls.append(1) or out)
    first, second = values.compute_cached(), values.compute_cached()
    assert first == second == out and len(calls) == 1
    assert type(second["primer"]["b"]) is int and second["primer"]["a"] == 0.30000000000000004  # exact


def test_any_source_file_changed_computes_again(tmp_path, monkeypatch):
    root = _tree(tmp_path / "src")
    monkeypatch.setattr(values, "ROOT", root)
    before = values.source_hash()
    for top in values.SOURCES:
        (root / top if (root / top).is_file() else root / top / "a.py").write_text("x = 2\n")
        after = values.source_hash()
        assert after != before, top
        before = after
    (root / "zoo" / "__pycache__").mkdir()
    (root / "zoo" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    assert values.source_hash() == before  # bytecode is not a source
    (root / "scripts" / "bench").write_text("changed")
    assert values.source_hash() == before  # nor a script the values do not read
