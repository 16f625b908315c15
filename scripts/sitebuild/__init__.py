"""The site's build tools, one module per step: ``vendor`` (the browser runtime, hash-checked, and
site/data/contract.json), ``prerender`` (every demo and every number the articles state, with
``values``; the figures drawn by ``headspace_site.figure.svg``), ``reference`` (the API pages), ``devserver`` (the site with the
deploy's headers) and ``browser`` (Debian's Chromium as tests and benchmarks launch it).

Importable from the shared venv (scripts/lib.sh puts scripts/ on its path) and from pytest (the
root conftest puts this checkout's scripts/ first); run a step with ``python -m sitebuild.<step>``.
"""
