"""`--search`: Simulee's evolutionary search for inputs that expose races (see `evolve`).

    from gpurace.search import search
    report = search("k.cu", grid=2, block=64)        # every scalar argument searched
    for f in report.findings:
        print(f.kind, f.input)                         # the input that first exposed it
"""

from gpurace.search.evolve import (
    DEFAULT_GENERATIONS,
    DEFAULT_POPULATION,
    MAX_GENERATIONS,
    MAX_POPULATION,
    SEARCH_STEP_BUDGET,
    search,
)

__all__ = ["DEFAULT_GENERATIONS", "DEFAULT_POPULATION", "MAX_GENERATIONS", "MAX_POPULATION", "SEARCH_STEP_BUDGET", "search"]
