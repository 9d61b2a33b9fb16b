// The one main() of cks_bench: every tests/bench/*.cpp is linked into that single executable.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
