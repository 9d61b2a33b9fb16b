# The GEMM runtime extension (python/src/runtime_module.cpp); use cks.torch instead.
from typing import Any

class Runtime:
    def __init__(
        self,
        *,
        mode: str | None = None,
        bundle_dir: str | None = None,
        model_path: str | None = None,
        tuning_file: str | None = None,
        kernel_cache: str | None = None,
        compile_on_miss: bool | None = None,
        compile_jobs: int | None = None,
        autotune_top: int | None = None,
        autotune_rounds: int | None = None,
        select_depth: int | None = None,
        verbose: bool | None = None,
        strict: bool | None = None,
        autotune_lt_algos: int | None = None,
        autotune_host_us: int | None = None,
        autotune_lt_margin_pct: int | None = None,
        autotune_lt_margin_us: int | None = None,
        nondeterministic: bool | None = None,
    ) -> None: ...
    def gemm(
        self, m: int, n: int, k: int, layout: str, a: int, b: int, d: int,
        alpha: float = 1.0, beta: float = 0.0, stream: int = 0,
    ) -> None: ...
    def query(self, m: int, n: int, k: int, layout: str) -> dict[str, Any]: ...
    mode: str
    def wait_compiles(self, timeout_s: float) -> int: ...
    def describe(self) -> str: ...
