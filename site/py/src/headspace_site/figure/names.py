"""One reader-facing name for each score, axiom, task and model family (issue 49).

Prose, tables, captions, menus, figure texts and printed outputs all use these words; the library's
keys (``svd_bound``, ``product_norm``, ``induction-none-attn-2l``) stay in code a reader would type.
A family's key reads ``<task>-<norm>-<attn|mlp>-<n>l`` (``headspace.benchmark.FAMILIES``); its name says the same in words, in the order the shipped
models' menu uses (``"2 layers, no norm"``).

>>> words("svd_bound"), words("product_norm"), words("1-strict"), words("mean")
('SVD bound', 'path size', 'A1 strict', 'mean')
>>> family("induction-none-attn-2l"), family("reverse-ln-mlp-2l")
('induction, 2 layers, no norm', 'reverse copy, 2 layers, LayerNorm, MLPs')
>>> group("all"), group("lookup"), group("recall-none-attn-1l")
('every model', 'lookup, every family', 'recall, 1 layer, no norm')
"""

from __future__ import annotations

import re

#: Each score as the articles name it; ``causal`` is the ground truth, path ablation.
METRIC_NAMES = {"frobenius": "Frobenius", "frobenius_baseline": "baseline-corrected", "svd_bound": "SVD bound",
                "subspace": "subspace", "token": "token", "whitened": "whitened", "causal": "path ablation",
                # the benchmark's further scores (Which composition score?)
                "frobenius_unfolded": "Frobenius unfolded", "svd_component": "SVD component",
                "projection_kernel": "projection kernel", "token_diagonal": "token diagonal",
                # its two magnitude baselines: the size of the path, and the sizes of its two heads
                "product_norm": "path size", "norm_product": "head sizes"}
#: The metric lab's axioms as its grid heads them.
AXIOM_NAMES = {"1": "A1", "1-strict": "A1 strict", "2": "A2", "3": "A3", "4": "A4"}
#: The zoos' tasks (``headspace.tasks.TASKS``, ``NEXT_TASKS``) as the benchmark article names them.
TASK_NAMES = {"induction": "induction", "reverse": "reverse copy", "lookup": "lookup", "text": "text",
              "recall": "recall", "words": "words", "table": "table lookup",
              "reptext": "repetitive text"}
_NORM_NAMES = {"none": "no norm", "rms": "RMSNorm", "ln": "LayerNorm"}
_FAMILY = re.compile(r"(?P<task>[a-z]+)-(?P<norm>none|rms|ln)-(?P<arch>attn|mlp)-(?P<layers>\d+)l")


def words(key) -> str:
    """A score's or an axiom's key in the articles' words (any other key as it is)."""
    return METRIC_NAMES.get(key, AXIOM_NAMES.get(key, str(key)))


def _family_parts(key: str) -> re.Match:
    m = _FAMILY.fullmatch(key)
    if m is None:
        raise ValueError(f"family must read <task>-<none|rms|ln>-<attn|mlp>-<n>l, e.g. "
                         f"'induction-none-attn-2l'; got {key!r}")
    return m


def family(key: str) -> str:
    """A zoo family's key in words: task, layers, normalisation, and MLPs when it has them."""
    m = _family_parts(key)
    n = int(m["layers"])
    parts = [TASK_NAMES.get(m["task"], m["task"]), f"{n} layer{'s' if n != 1 else ''}", _NORM_NAMES[m["norm"]]]
    return ", ".join(parts + (["MLPs"] if m["arch"] == "mlp" else []))



def family_short(key: str) -> str:
    """A zoo family in a few characters, for a figure's axis on a phone: task, layers, norm, MLPs.

    >>> family_short("induction-ln-mlp-2l"), family_short("recall-none-attn-2l")
    ('induction 2L LN+MLP', 'recall 2L')
    """
    m = _family_parts(key)
    norm = {"none": "", "rms": " RMS", "ln": " LN"}[m["norm"]]
    return f"{m['task']} {m['layers']}L{norm}{'+MLP' if m['arch'] == 'mlp' else ''}"

def group(key: str) -> str:
    """A benchmark group in words: ``"all"``, a task (its every family) or one family."""
    if key == "all":
        return "every model"
    if key in TASK_NAMES:
        return f"{TASK_NAMES[key]}, every family"
    return family(key)
