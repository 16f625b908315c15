"""The model store: where model files live, reading them with their checksums, and writing them.

A *model directory* holds ``config.json`` (the fields of TransformerLens's
``HookedTransformerConfig``), ``weights.npz`` (final weights under TransformerLens
state-dict keys) and optionally ``checkpoints.npz`` (key ``step_<n>/<state-dict
key>``) and ``training_curve.json``. A *store* is a directory of model
directories with a ``manifest.json`` that records every file's sha256; reading a
listed model checks every byte against it.

Where models come from is always explicit: a path you pass, or the name of a
model shipped *inside this package* (``headspace/models/``, package data), or
``$HEADSPACE_MODELS`` when set (the browser worker sets it to where it copied
the files, because the wheel it loads leaves the models out). Nothing here
looks for a source tree.

This module only moves bytes and checks them; ``headspace.model`` runs the
forward pass on what it reads.

>>> list_models()
['attn-only-2l', 'attn-only-2l-rms']
>>> stored = read_model("attn-only-2l", step=600)
>>> stored.name, stored.step, stored.state["embed.W_E"].shape
('attn-only-2l', 600, (128, 64))
>>> import tempfile, pathlib                       # write a model of your own, then read it back, checked
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> _ = write_model(root, "copy", stored.config, stored.state)
>>> read_model(root / "copy").state["embed.W_E"].shape
(128, 64)
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["MissingModelFile", "Stored", "SHIPPED", "models_dir", "read_manifest", "list_models", "read_config", "model_directory", "read_model",
           "read_checkpoints", "read_training_curve", "read_state_npz", "save_npz", "write_model"]

MANIFEST = "manifest.json"
CONFIG = "config.json"
WEIGHTS = "weights.npz"
CHECKPOINTS = "checkpoints.npz"
TRAINING_CURVE = "training_curve.json"
#: The toy models shipped as package data.
SHIPPED = Path(__file__).with_name("models")


class MissingModelFile(ValueError):
    """A model file that is not on disk (yet): the browser's worker downloads ``path`` (under the
    models' root) and calls again. A ValueError, as every bad input here."""

    def __init__(self, path: Path):
        super().__init__(f"model file {path} is missing")
        self.path = Path(path)


@dataclass
class Stored:
    """What a model directory holds for one set of weights: enough to build a ``Model``."""
    config: dict
    state: dict[str, np.ndarray]
    name: str
    step: int | None = None                       # None: the final weights
    steps: tuple[int, ...] = field(default=())    # the training steps with a checkpoint


def models_dir() -> Path:
    """The store that bare model names resolve in: ``$HEADSPACE_MODELS`` if set, else the package's own.

    >>> models_dir() == SHIPPED
    True
    """
    return _models_dir(os.environ.get("HEADSPACE_MODELS"))


@functools.lru_cache(maxsize=8)
def _models_dir(env: str | None) -> Path:
    """``models_dir()`` for the value of ``$HEADSPACE_MODELS``, which decides it; cached (a missing
    manifest raises, so is asked about again), since the demos ask on every score they read: 140
    file-system stats a move for composition-over-training, slow in Pyodide's file system."""
    where = Path(env) if env else SHIPPED
    if not (where / MANIFEST).is_file():
        source = "$HEADSPACE_MODELS" if env else "the installed package (its models/ data is missing)"
        raise ValueError(f"no {MANIFEST} in {where} (from {source}); set HEADSPACE_MODELS to a "
                         f"directory of models with a {MANIFEST}, or pass a model directory")
    return where


def read_manifest(where=None) -> dict:
    """The ``manifest.json`` of a directory of models (default ``models_dir()``): per model its
    files' sha256, checkpoint steps and normalisation. The one reader of that file.

    >>> sorted(read_manifest()["models"])
    ['attn-only-2l', 'attn-only-2l-rms']
    """
    return _read_manifest(Path(where if where is not None else models_dir()) / MANIFEST)


def list_models() -> list[str]:
    """Names of the models in ``models_dir()``, in manifest order."""
    return list(read_manifest()["models"])


def read_config(path, *, verify: bool = True) -> dict:
    """The ``config.json`` of a model directory or shipped model name (checked against the manifest).

    >>> read_config("attn-only-2l")["n_layers"]
    2
    """
    return _open(path, verify)[1]


def model_directory(path) -> Path:
    """The directory of a model given as a path, or as the bare name of a model in ``models_dir()``."""
    if isinstance(path, (str, os.PathLike)) and Path(path).is_dir():
        return Path(path)
    if isinstance(path, str) and path and "/" not in path and os.sep not in path:
        where = models_dir()
        if (where / path).is_dir():
            return where / path
        raise ValueError(f"path must be a model directory or a shipped model name "
                         f"{list_models()}; got {path!r}")
    raise ValueError(f"path must be a model directory or a shipped model name; got {path!r} "
                     f"(no such directory)")


def read_model(path, step: int | None = None, *, verify: bool = True) -> Stored:
    """Config and weights of a model directory: final weights, or the checkpoint at training ``step``.

    ``path`` is a model directory or the bare name of a shipped model. Every file
    read is checked against the sha256 that ``manifest.json`` (in the parent
    directory) records for it, unless ``verify=False`` (a directory of your own
    without a manifest). Missing files, checksum mismatches and unreadable files
    raise ValueError naming the file.
    """
    directory, config, steps, read = _open(path, verify)
    if step is None:
        state, _ = _read_npz(directory / WEIGHTS, read(WEIGHTS))
        return Stored(config, state, directory.name, None, steps)
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
        raise ValueError(f"step must be an integer training step or None; got {type(step).__name__} {step!r}")
    state, keys = _read_npz(directory / CHECKPOINTS, read(CHECKPOINTS), f"step_{int(step)}/")
    steps = steps or _steps_of(keys)
    if not state:
        raise ValueError(f"step must be one of the checkpoint steps {list(steps)}; got {step}")
    return Stored(config, state, directory.name, int(step), steps)


def read_checkpoints(path, *, verify: bool = True) -> list[Stored]:
    """Every training checkpoint of a model, in step order, from one read of its file.

    ``read_model(path, step)`` reads (and checks) the whole checkpoint file for
    one step; a curve over all checkpoints wants this instead.

    >>> [s.step for s in read_checkpoints("attn-only-2l")][:2]
    [0, 600]
    """
    directory, config, steps, read = _open(path, verify)
    arrays, keys = _read_npz(directory / CHECKPOINTS, read(CHECKPOINTS))
    steps = steps or _steps_of(keys)
    by_step: dict[int, dict] = {}
    for key, value in arrays.items():
        head, rest = key.split("/", 1)
        by_step.setdefault(int(head[len("step_"):]), {})[rest] = value
    return [Stored(config, state, directory.name, s, steps) for s, state in sorted(by_step.items())]


def read_training_curve(path, *, verify: bool = True) -> dict:
    """The model's ``training_curve.json`` (losses and head scores during training), checked.

    >>> sorted(read_training_curve("attn-only-2l"))[:2]
    ['checkpoint_steps', 'first_half_loss']
    """
    directory, _, _, read = _open(path, verify)
    try:
        return json.loads(read(TRAINING_CURVE))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{directory / TRAINING_CURVE} is not valid JSON: {exc}") from None


def read_state_npz(weights, config) -> Stored:
    """A model from loose files: an ``.npz`` of TransformerLens state-dict keys and a config JSON file.

    For weights saved from a ``HookedTransformer`` with
    ``np.savez(path, **{k: v.numpy() for k, v in model.state_dict().items()})``
    and ``json.dump(model.cfg.to_dict(), ...)`` (only the fields ``Model`` reads matter).
    """
    weights, config = Path(weights), Path(config)
    for what, p in (("weights", weights), ("config", config)):
        if not p.is_file():
            raise ValueError(f"{what} file {p} does not exist")
    try:
        cfg = json.loads(config.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"config {config} is not valid JSON: {exc}") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"config {config} must hold a JSON object; got {type(cfg).__name__}")
    state, _ = _read_npz(weights, weights.read_bytes())
    return Stored(cfg, state, weights.stem)


def save_npz(path, arrays: dict[str, np.ndarray]) -> Path:
    """``np.savez_compressed`` with fixed zip timestamps, so equal arrays give equal bytes."""
    path = Path(path)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for key, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())
    return path


def write_model(root, name: str, config: dict, weights: dict[str, np.ndarray], *,
                checkpoints: dict[int, dict[str, np.ndarray]] | None = None,
                training_curve: dict | None = None, **entry) -> Path:
    """Write a model directory ``root/name`` and record its files' sha256 in ``root/manifest.json``.

    ``checkpoints`` maps a training step to a state dict (stored as float16, as
    the shipped ones); ``entry`` adds fields to the model's manifest entry (a
    description, its normalization_type, ...). Other models in the manifest are
    kept. Returns the model directory.
    """
    if not name or "/" in name or os.sep in name:
        raise ValueError(f"name must be a plain directory name; got {name!r}")
    root = Path(root)
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    _write_json(directory / CONFIG, config)
    save_npz(directory / WEIGHTS, weights)
    if checkpoints:
        save_npz(directory / CHECKPOINTS, {f"step_{s}/{k}": np.asarray(v).astype(np.float16)
                                          for s, state in sorted(checkpoints.items()) for k, v in state.items()})
        entry.setdefault("checkpoint_steps", sorted(int(s) for s in checkpoints))
    if training_curve is not None:
        _write_json(directory / TRAINING_CURVE, training_curve)
    files = {}
    for f in sorted(p for p in directory.iterdir() if p.is_file()):
        data = f.read_bytes()
        files[f.name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    manifest_path = root / MANIFEST
    manifest = _read_manifest(manifest_path) if manifest_path.is_file() else {
        "format_version": 1, "description": "Models in the headspace store format (headspace.store).",
        "models": {}}
    manifest["models"][name] = dict(entry, files=files)
    _write_json(manifest_path, manifest)
    return directory


# --------------------------------------------------------------------------- private

def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=1) + "\n")


def _open(path, verify: bool):
    """(directory, config, checkpoint steps, a checked file reader) for a model directory."""
    directory = model_directory(path)
    entry = None
    if verify:
        manifest = _read_manifest(directory.parent / MANIFEST)
        entry = manifest["models"].get(directory.name)
        if entry is None:
            raise ValueError(f"model {directory.name!r} is not in {directory.parent / MANIFEST}; "
                             f"it lists {sorted(manifest['models'])} (pass verify=False for an unlisted model)")
    read = lambda filename: _read_file(directory, filename, entry)  # noqa: E731
    try:
        config = json.loads(read(CONFIG))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{directory / CONFIG} is not valid JSON: {exc}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{directory / CONFIG} must hold a JSON object; got {type(config).__name__}")
    steps: tuple[int, ...] = tuple(entry.get("checkpoint_steps", ())) if entry else ()
    return directory, config, steps, read


def _steps_of(keys) -> tuple[int, ...]:
    return tuple(sorted({int(k.split("/")[0][len("step_"):]) for k in keys}))


def _read_manifest(path: Path) -> dict:
    try:
        manifest = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ValueError(f"no manifest at {path}: it records the sha256 of every model file "
                         f"(pass verify=False to load an unlisted model)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("models"), dict):
        raise ValueError(f"{path} must hold an object with a 'models' object")
    return manifest


#: What a zoo model measurably does (written by ``headspace.mechanisms``, read by the benchmark too).
MECHANISM_FILE = "mechanism.json"


def read_json(root, name: str, filename: str) -> dict:
    """The JSON file ``filename`` of model ``name`` in ``root``, checked against ``root``'s manifest.

    >>> read_json(models_dir(), "attn-only-2l", "config.json")["n_layers"]
    2
    """
    root = Path(root)
    entry = read_manifest(root)["models"].get(name)
    if entry is None or filename not in entry.get("files", {}):
        raise ValueError(f"name must be a model of {root} with a recorded {filename}; got {name!r}")
    return json.loads(_read_file(root / name, filename, entry))

def _read_file(directory: Path, filename: str, entry: dict | None) -> bytes:
    """The bytes of ``directory/filename``, checked against the manifest ``entry`` when given."""
    path = directory / filename
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise MissingModelFile(path) from None
    if entry is not None:
        want = entry.get("files", {}).get(filename, {}).get("sha256")
        if want is None:
            raise ValueError(f"the manifest records no sha256 for {path}")
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            raise ValueError(f"checksum mismatch for {path}: manifest sha256 {want}, file sha256 {got} "
                             f"({len(data)} bytes); the file is corrupt or was changed without "
                             f"updating the manifest (headspace.store.write_model does both)")
    return data


def _read_npz(path: Path, data: bytes, prefix: str = "") -> tuple[dict[str, np.ndarray], list[str]]:
    """The arrays whose key starts with ``prefix`` (the prefix removed), and all keys in the file."""
    # np.load takes a lone .npy as one array and anything else for a pickle, whose error misleads
    if not data.startswith(b"PK"):
        raise ValueError(f"{path} is not a readable .npz file: an .npz is a zip archive (np.savez), starting "
                         f"with b'PK'; it starts with {data[:8]!r}")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {k[len(prefix):]: npz[k] for k in npz.files if k.startswith(prefix)}, list(npz.files)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
        raise ValueError(f"{path} is not a readable .npz file: {exc}") from None
