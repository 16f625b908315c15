"""The messages between a page and the Python worker, and Python's answers, as ``protocol.json``
beside this module declares them: the one place they are written (the page's scripts read the same
file, mounted by Hugo). Python builds its refusals here, so that every error it gives the page has
a kind from the one enumeration and that kind's fields.

>>> error("parameter", parameter="theta", message="Polariser angle θ must be between 0 and 180; got 400")["kind"]
'parameter'
>>> error("typo", message="x")
Traceback (most recent call last):
...
ValueError: error kind 'typo' is not in protocol.json; its kinds are parameter, missing-model, model-download, python, not-ready, boot, checkpoint
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["SPEC", "KINDS", "error", "check"]

# Read beside this file, not through importlib.resources: the browser's trimmed standard library
# leaves out importlib.readers.
SPEC: dict = json.loads(Path(__file__).with_name("protocol.json").read_text(encoding="utf-8"))
#: Every kind of error, in the order protocol.json lists them.
KINDS: tuple[str, ...] = tuple(SPEC["errors"])


def check(fields: list[str], message: dict, what: str) -> None:
    """Raise ValueError unless ``message`` has each of ``fields`` (a name ending in ``?`` may be
    missing) and nothing else.

    >>> check(["id", "figure?"], {"id": 1}, "call")
    >>> check(["id"], {"id": 1, "x": 2}, "call")
    Traceback (most recent call last):
    ...
    ValueError: call: unexpected field(s) x; its fields are id
    """
    required = {f for f in fields if not f.endswith("?")}
    allowed = required | {f[:-1] for f in fields if f.endswith("?")}
    if missing := sorted(required - set(message)):
        raise ValueError(f"{what}: missing field(s) {', '.join(missing)}; its fields are {', '.join(fields)}")
    if extra := sorted(set(message) - allowed):
        raise ValueError(f"{what}: unexpected field(s) {', '.join(extra)}; its fields are {', '.join(fields)}")


def error(kind: str, **fields) -> dict:
    """An error for the page: ``{"kind": kind, **fields}``, checked against protocol.json."""
    if kind not in SPEC["errors"]:
        raise ValueError(f"error kind {kind!r} is not in protocol.json; its kinds are {', '.join(KINDS)}")
    check(SPEC["errors"][kind]["fields"], fields, f"error {kind!r}")
    return {"kind": kind, **fields}
