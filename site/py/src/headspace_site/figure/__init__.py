"""The figure engine: what every demo in ``headspace_site.demos`` is declared with and drawn through.

``demos/`` holds the figures, one module each; this package holds what they share:

* ``registry``: ``@register``, ``Param``, ``Demo`` and ``REGISTRY`` (one name, one pure function,
  called alike by pytest, the build and the browser's worker), parameters checked by ``Param``;
* ``outputs``: what each output is called and how it prints (``Output``, ``format_outputs``), and
  the words a figure uses for heads;
* ``names``: one reader-facing name per score, axiom, task and zoo family (``words``, ``family``);
* ``style``: plotly figure dicts in the house style (``figure``, ``scatter``, ``COLORS``);
* ``widths``: the widths a figure is drawn at and where each shows (``widths.json``: ``WIDTHS``,
  ``drawing_width``, the CSS that shows the build's drawing);
* ``fit``: a figure laid out for the width it is drawn at (``fit``);
* ``colour``: colours read once and written in one form (``canonical_figure``), colour scales;
* ``keys``: a parameter value's key, its JSON as the page writes it (``key``, ``same``);
* ``shipped``: the shipped toy models as the demos see them (names, steps, weights, scores,
  cached), and the controls every model demo shares;
* ``causal_table``: the shipped models' path ablation, computed once
  (``python -m headspace_site.figure.causal_table``) into ``causal_table.json``.

Imports run one way: ``registry`` reads ``outputs``, ``colour``, ``fit`` (its colour bars) and ``keys``; ``colour`` reads
``keys``; ``fit`` reads ``colour`` and ``widths``; ``outputs`` reads ``names``; ``style`` reads ``outputs``; ``shipped``
reads ``outputs`` and ``registry``; ``causal_table`` reads ``shipped``.
"""
