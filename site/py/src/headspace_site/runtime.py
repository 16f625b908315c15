"""One JSON call into the demo registry: the entry point of the browser's worker and of the
Pyodide test runner alike, so that both run exactly what pytest runs.

``call(name, params_json)`` returns the JSON the page draws, ``{"figure", "outputs", "text",
"controls"}`` (``controls``: what each control holds at these settings, ``Param.control``); only
strings cross, no Python object. The registry reads the shipped models' manifest when it is
imported (model names, checkpoint steps): ``load()`` imports it once the models are in place,
and ``use_models(root)`` points the store at a directory that holds the manifest and receives
the other files as demos ask for them (the browser's worker copies a file when a call answers
that it is missing, an error of kind ``missing-model``, then calls again), forgetting demos imported without it.

>>> import json
>>> out = json.loads(call("polarizer", '{"theta": 90}'))
>>> sorted(out), out["outputs"]["transmission"], out["text"]["transmission"], out["controls"]["theta"]
(['controls', 'figure', 'outputs', 'text'], 0.5, '0.5', {'text': '90', 'active': True})
>>> call("nonesuch", "{}")
Traceback (most recent call last):
...
ValueError: unknown demo 'nonesuch'; see headspace_site.demos.REGISTRY
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import traceback
import types
from pathlib import Path

from headspace import store

from headspace_site import protocol

__all__ = ["answer", "call", "import_demos", "load", "forget", "use_models"]

_registry = None
#: zlib's level for a live drawing's heatmaps (``svg.render``'s ``png_level``): the fastest; the pixels
#: are the build's, the bytes a little more than at the build's 9.
LIVE_PNG_LEVEL = 1


def load(modules: list[str] | None = None) -> dict:
    """The registry, imported on first use (an import that fails leaves nothing half-imported).

    With ``modules`` (the demo modules a page places, e.g. ``["headspace_site.demos.polarizer"]``), only
    those are imported, so the worker's first render waits for no other demo's imports: their package
    is stood in for by a bare one (its ``__init__`` imports every demo), the registry holds what was
    imported, and ``load()`` or a call for a demo not imported yet imports the rest.
    """
    global _registry
    if _registry is not None and not _partial():
        return _registry  # every demo is in
    try:
        if modules is None:
            if _partial():
                del sys.modules["headspace_site.demos"]  # the bare stand-in; the modules it found stay
            from headspace_site.demos import REGISTRY
        else:
            REGISTRY = _bare_package().REGISTRY
            for name in modules:
                importlib.import_module(name)
    except BaseException:
        forget()
        raise
    _registry = REGISTRY
    return _registry


def _partial() -> bool:
    """Whether ``headspace_site.demos`` is the bare stand-in of a partial load."""
    return getattr(sys.modules.get("headspace_site.demos"), "_bare", False)


def _bare_package() -> types.ModuleType:
    """``headspace_site.demos`` without its ``__init__``: the path its modules are found on, and the
    registry's public names (what ``from headspace_site.demos import ...`` expects)."""
    bare = sys.modules.get("headspace_site.demos")
    if bare is None:
        spec = importlib.util.find_spec("headspace_site.demos")
        bare = types.ModuleType("headspace_site.demos")
        bare.__path__, bare.__spec__, bare.__file__ = list(spec.submodule_search_locations), spec, spec.origin
        bare.__package__, bare._bare = "headspace_site.demos", True
        sys.modules["headspace_site.demos"] = bare
        registry = importlib.import_module("headspace_site.figure.registry")
        for name in ("REGISTRY", "Demo", "Param", "register", "to_json_value", "format_value", "format_outputs"):
            setattr(bare, name, getattr(registry, name))
    return bare


def use_models(root: str) -> list[str]:
    """Read the shipped models from ``root``, which holds their ``manifest.json`` (and gets each
    other file when a demo first reads it): a directory per listed model, so that names resolve,
    and the demos imported before forgotten. Returns the files the demos read when imported
    (each model's config), relative to ``root``, for the worker to copy first."""
    os.environ["HEADSPACE_MODELS"] = root
    names = store.list_models()
    for name in names:
        (Path(root) / name).mkdir(parents=True, exist_ok=True)
    forget()
    return [f"{name}/{store.CONFIG}" for name in names]


def forget() -> None:
    """Drop the imported demos: the next ``load()`` imports them again and re-reads the manifest."""
    global _registry
    _registry = None
    for key in [k for k in sys.modules if k.split(".")[:2] in (["headspace_site", "demos"], ["headspace_site", "figure"])]:
        del sys.modules[key]    # the registry and the shipped models' names, read from the manifest, too


def call(name: str, params_json: str, width: int | None = None, figure: bool = True) -> str:
    """Run demo ``name`` on parameters given as JSON; its result as compact JSON, with ``text``:
    each output as the page prints it (``headspace_site.demos.format_value``). With ``width``, the
    figure is laid out to be drawn that many px wide (``headspace_site.figure.fit.fit``), as the
    build laid out the static drawing the page showed first, and ``svg`` is that drawing.
    ``figure=False`` leaves the figure's data out: a page draws every move from ``svg`` and asks
    for the data (plotly's, for hover values) only where a pointer is: on our heavier demos the
    data are most of an answer's bytes, written, sent, kept and parsed on every move.

    >>> sorted(json.loads(call("polarizer", '{"theta": 90}', 330, figure=False)))
    ['controls', 'outputs', 'svg', 'text']
    """
    registry = _registry if _registry is not None else load()
    if name not in registry and _partial():
        registry = load()  # a demo the page did not list: import them all
    demo = registry.get(name)
    if demo is None:
        raise ValueError(f"unknown demo {name!r}; see headspace_site.demos.REGISTRY")
    params = json.loads(params_json)
    result = demo.run(params)
    if width is not None:
        from headspace_site.figure.fit import fit
        from headspace_site.figure.svg import SVG_UID, render
        result["figure"] = fit(result["figure"], width)
        # the page shows this drawing: the one the build drew for its first paint and its answers
        # (deflated lightly: a move's drawing goes from the worker to the page, never over the network)
        result["svg"] = render(result["figure"], width, uid=f"{SVG_UID}{width}", css_class="live", png_level=LIVE_PNG_LEVEL)
    if not figure:
        del result["figure"]
    from headspace_site.demos import format_outputs
    result["text"] = format_outputs(result["outputs"])
    result["controls"] = demo.controls(params)  # what each control holds at these settings, as Python writes it
    return json.dumps(result, separators=(",", ":"))


def answer(name: str, params_json: str, width: int | None = None, figure: bool = True) -> tuple[str, str]:
    """``call``, with every failure given back as data rather than raised: ``("result", json)``,
    or ``("error", json)`` of an error of protocol.json (``headspace_site.protocol``), so that the
    worker tells the two apart without reading the answer and the page never reads an exception's
    words for its kind. Kinds: ``parameter`` (a value the demo refused: the page marks that
    control), ``missing-model`` (a model file not downloaded yet, ``path`` under the models' root:
    the worker copies it and asks again), ``python`` (any other exception: a bug).

    >>> status, out = answer("polarizer", '{"theta": 500}')
    >>> status, json.loads(out)["kind"], json.loads(out)["parameter"]
    ('error', 'parameter', 'theta')
    >>> json.loads(answer("nonesuch", "{}")[1])["message"]
    "ValueError: unknown demo 'nonesuch'; see headspace_site.demos.REGISTRY"
    >>> answer("polarizer", '{"theta": 90}')[0]
    'result'
    """
    from headspace_site.figure.registry import ParameterError
    try:
        return "result", call(name, params_json, width, figure)
    except ParameterError as exc:
        error = protocol.error("parameter", parameter=exc.param, message=str(exc))
    except store.MissingModelFile as exc:
        error = protocol.error("missing-model", path=_under_models(exc.path), message=str(exc))
    except Exception as exc:  # a bug: its type and words, as a traceback's last line gives them
        error = protocol.error("python", message=_said(exc))
    return "error", json.dumps(error, separators=(",", ":"), ensure_ascii=False)


def _said(exc: BaseException) -> str:
    """An exception as one line: ``ValueError: unknown demo 'x'``."""
    return traceback.format_exception_only(exc)[-1].strip()


def import_demos(modules: list[str] | None = None) -> str | None:
    """``load(modules)``; the JSON of an error of protocol.json if it failed: ``missing-model``
    (a model file the imports read but did not find, its path under the models' root: the worker
    downloads it and calls again) or ``python``. None once every module is in.

    >>> import_demos(["headspace_site.demos.polarizer"]) is None
    True
    """
    try:
        load(modules)
    except store.MissingModelFile as exc:
        error = protocol.error("missing-model", path=_under_models(exc.path), message=str(exc))
    except Exception as exc:
        error = protocol.error("python", message=_said(exc))
    else:
        return None
    return json.dumps(error, separators=(",", ":"), ensure_ascii=False)


def _under_models(path: Path) -> str:
    """A model file's path relative to the models' root, as the worker fetches it from the site."""
    root = store.models_dir()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
