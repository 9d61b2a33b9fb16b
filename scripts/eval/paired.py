"""The paired bootstrap the comparison scripts share (scripts/eval/sbs_compare.py, llm_compare.py)."""
import random
import statistics as st


def bootstrap_interval(d, draws=4000, seed=0):
    """95 % interval of the mean of the per-group differences d: percentiles 2.5 and 97.5 of the
    means of `draws` resamples with replacement (seeded)."""
    rng = random.Random(seed)
    boot = sorted(st.mean(rng.choices(d, k=len(d))) for _ in range(draws))
    return boot[int(0.025 * draws)], boot[int(0.975 * draws) - 1]
