"""cks: the CUTLASS BF16 GEMM kernel selector for Hopper (docs/library.md, "Python").

    import cks
    best = cks.select(4096, 4096, 4096, "tn")[0]
    best.kernel_id, best.knobs, best.canonical, best.score

``select`` ranks the catalogue of one problem with the shipped model (or ``model=``) and returns
frozen :class:`Selection` records, best first. A :class:`Selector` keeps its model loaded; the
module-level ``select`` shares one per model file. The problem is checked as ``cks select`` and
the C API check it (one message): M, N, K in [1, 2^31-1], layout tn/nt/nn/tt, the layout's
contiguous dimensions multiples of 8. Bad input raises ValueError, a model that cannot be loaded
RuntimeError. This module needs neither torch nor CUDA; ``cks.torch`` runs GEMMs with the picks.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from . import _cks

__all__ = ["LAYOUTS", "Selection", "Selector", "data_path", "select", "__version__"]

__version__: str = _cks.version()

LAYOUTS = ("tn", "nt", "nn", "tt")
"""Operand layouts: the first letter is A (M x K), the second B (K x N); t row-major, n column-major; D is column-major."""

_INT64 = 1 << 63
_RASTER = {"h": "heuristic", "m": "along_m", "n": "along_n"}
_DECOMPOSITION = {"h": "heuristic", "dp": "data_parallel", "sk": "split_k", "streamk": "stream_k"}
_REDUCTION = {"d": "deterministic", "n": "nondeterministic"}


def _knobs(text: str) -> Mapping[str, str | int]:
    """ "r=m,s=2,d=h,k=1" -> {"raster": "along_m", "swizzle": 2, "decomposition": "heuristic", "splits": 1,
    "reduction": "deterministic"} (",x=n": the stream-K splits add nondeterministically)
    (read-only: the records are shared by later calls of the same problem)."""
    raw = dict(part.split("=", 1) for part in text.split(","))
    return MappingProxyType({
        "raster": _RASTER.get(raw["r"], raw["r"]),
        "swizzle": int(raw["s"]),
        "decomposition": _DECOMPOSITION.get(raw["d"], raw["d"]),
        "splits": int(raw["k"]),
        "reduction": _REDUCTION.get(raw.get("x", "d"), raw.get("x", "d")),
    })


@dataclass(frozen=True)
class Selection:
    """One ranked candidate: a catalogue kernel with its runtime knobs."""

    rank: int  # 1 = the model's pick
    kernel_id: str  # "k" + 16 hex digits (cks catalogue show ID, cks emit ID)
    knobs: Mapping[str, str | int] = field(hash=False)  # raster, swizzle, decomposition, splits, reduction (read-only)
    knobs_text: str  # the same, as `cks select` prints it: "r=m,s=2,d=h,k=1"
    canonical: str  # the kernel descriptor, e.g. "sm90_bf16_tn_128x144x64_1x1x1_s0_cooperative+..."
    score: float  # the model's score (higher is better; a ranking score, not a time)
    tile: tuple[int, int, int]  # CTA tile M, N, K
    cluster: tuple[int, int]  # cluster M, N
    stages: int  # mainloop stages; 0 = automatic (CUTLASS's carve-out)

    @property
    def swapped(self) -> bool:
        """A swapped kernel: it runs D^T = B^T A^T on the caller's operands (row-major D^T), the
        transposed problem's pick; its tile M runs along the problem's N. Both orientations are
        ranked by default ($CKS_ORIENTATIONS=own: the problem's own layout only)."""
        return self.canonical.endswith("+swap") or self.canonical.endswith("+swap+slicek")

    @property
    def sliced(self) -> bool:
        """A sliced-K kernel: its K slices run in parallel into FP32 partials, then a fixed-order
        reduction writes D (bitwise reproducible); the knobs' splits are the slice count. The
        default ranking leads few-tile, long-K problems with one (docs/catalogue.md, "Sliced-K
        kernels")."""
        return self.canonical.endswith("+slicek")


def _dim(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int (got {type(value).__name__})")
    # Beyond int64 the C API cannot take the value: the same messages as its check.
    if value >= _INT64:
        raise ValueError(f"{name} is too large (got {value}, at most 2^31-1 = 2147483647)")
    if value < -_INT64:
        raise ValueError(f"{name} must be positive (got {value})")
    return value


class Selector:
    """A loaded model: ``select`` ranks problems, each cached after its first ranking.

    ``model`` is a model file (default: the shipped model, or ``$CKS_MODEL``); ``static=True``
    ranks by the static efficiency score instead (``cks select --fallback static``).
    Thread-safe; the GIL is released while ranking.
    """

    def __init__(self, model: str | os.PathLike[str] | None = None, *, static: bool = False) -> None:
        if static and model is not None:
            raise ValueError("static ranks without a model: drop model")
        self._handle = _cks.Handle(None if model is None else os.fspath(model), static)
        # The model file in use (None: the static score).
        self.model: str | None = None if static else os.fspath(model) if model is not None else _cks.data_path("model")
        # The library caches rankings per problem; this keeps the Python objects of recent calls too
        # (typed: 1 and True are different keys, so a bad argument always reaches the checks).
        self._ranked = functools.lru_cache(maxsize=1024, typed=True)(self._rank)

    def select(self, m: int, n: int, k: int, layout: str = "tn", top: int = 1) -> list[Selection]:
        """The best ``top`` candidates of the problem (fewer if the catalogue has fewer), best first."""
        return list(self._ranked(m, n, k, layout, top))

    def _rank(self, m: int, n: int, k: int, layout: str, top: int) -> tuple[Selection, ...]:
        if isinstance(top, bool) or not isinstance(top, int):
            raise TypeError(f"top must be an int (got {type(top).__name__})")
        if top < 1:
            raise ValueError(f"top must be >= 1 (got {top})")
        if not isinstance(layout, str):
            raise TypeError(f"layout must be a str (got {type(layout).__name__})")
        rows = self._handle.select(_dim("M", m), _dim("N", n), _dim("K", k), layout, min(top, 1 << 32))
        return tuple(
            Selection(i + 1, kid, _knobs(knobs), knobs, canonical, score, (tm, tn, tk), (cm, cn), stages)
            for i, (kid, knobs, canonical, score, tm, tn, tk, cm, cn, stages) in enumerate(rows)
        )

    def __repr__(self) -> str:
        return f"cks.Selector({'static score' if self.model is None else self.model!r})"


_selectors: dict[str | None, Selector] = {}
_lock = threading.Lock()


def _selector(model: str | os.PathLike[str] | None) -> Selector:
    key = None if model is None else os.path.realpath(model)
    with _lock:  # one load per model file, even when threads race for it
        if key not in _selectors:
            _selectors[key] = Selector(model)
        return _selectors[key]


def select(m: int, n: int, k: int, layout: str = "tn", top: int = 1, model: str | os.PathLike[str] | None = None) -> list[Selection]:
    """The best ``top`` kernel configurations of the BF16 GEMM (M, N, K, layout), best first.

    The model (the shipped default, or ``model``) is loaded at the first call and kept.
    """
    return _selector(model).select(m, n, k, layout, top)


def data_path(what: str) -> str:
    """The file the library reads for ``what``: "model" (the default model) or "hw_presets"."""
    return _cks.data_path(what)
