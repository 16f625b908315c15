"""Every demo on the site, by name: ``REGISTRY[name].run(params)``.

Add a demo by writing a module here that uses ``@register`` and importing it
below; the site, the prerender step, the worker and the tests all find it.
"""

from ._registry import REGISTRY, Demo, Param, register, to_json_value
from . import polarizer  # noqa: F401  (registers itself)

__all__ = ["REGISTRY", "Demo", "Param", "register", "to_json_value"]
