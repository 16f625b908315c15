"""The site's Python: every figure of the headspace explainer, and what draws it.

Researchers install the library, ``headspace`` (``py/``); this package is the site's own and
ships only to the reader's browser (and the build). It reads the library through public names
and the library never imports it (``tests/unit/test_imports.py``):

* ``demos``: one module per figure and ``demos.REGISTRY`` (name -> ``Demo``), which pytest, the
  build's prerender and the browser's worker all call;
* ``figure``: the engine every demo is declared with, laid out and drawn through (registry,
  outputs, style, fit, svg, ...);
* ``runtime``: one JSON call into the registry, the entry point of the worker;
* ``optics``: polarisers, the physical picture of a rank-1 projection the first articles use.

>>> from headspace_site.demos import REGISTRY
>>> REGISTRY["polarizer"].run({"theta": 90})["outputs"]["transmission"]
0.5
"""
