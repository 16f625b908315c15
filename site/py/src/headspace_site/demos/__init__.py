"""Every demo on the site, by name: ``REGISTRY[name].run(params)``.

One module per figure, each a declaration (``@register``: its parameters, outputs and one-line
key) and the pure function that computes it; what they share (the registry, how outputs print,
the house style, the layout at each width, the shipped models) is the figure engine,
``headspace_site.figure``. Add a demo by writing a module here and importing it below (the order is
the registry's, and the gallery's); the site, the prerender step, the worker and the tests all
find it.
"""

from headspace_site.figure.outputs import Output
from headspace_site.figure.registry import REGISTRY, Demo, Param, format_outputs, format_value, register, to_json_value
from . import polarizer  # noqa: F401  (registers itself)
from . import projection  # noqa: F401
from . import bottleneck  # noqa: F401
from . import three_polarizers  # noqa: F401
from . import hidden_symmetry  # noqa: F401
from . import communication  # noqa: F401
from . import identity_paradox  # noqa: F401
from . import metric_lab  # noqa: F401
from . import composition_scores  # noqa: F401
from . import composition_over_training  # noqa: F401
from . import token_path  # noqa: F401
from . import metric_agreement  # noqa: F401
from . import residual_basis  # noqa: F401
from . import norm_symmetry  # noqa: F401
from . import transform_rules  # noqa: F401
from . import attention_explorer  # noqa: F401
from . import path_expansion  # noqa: F401
from . import circuits  # noqa: F401
from . import inclusion_swap  # noqa: F401
from . import reader_swap  # noqa: F401
from . import rank_drop  # noqa: F401
from . import singular_routes  # noqa: F401
from . import random_subspaces  # noqa: F401
from . import score_benchmark  # noqa: F401
from . import score_intervals  # noqa: F401
from . import zoo_mechanisms  # noqa: F401
from . import residual_stream  # noqa: F401

__all__ = ["REGISTRY", "Demo", "Param", "Output", "register", "to_json_value", "format_value", "format_outputs"]
