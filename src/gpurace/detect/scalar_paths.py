"""How many lanes a batch may have for the detectors' plain-Python paths.

Lock kernels spend most of their events on batches of one or a few lanes: a
spinning `atomicCAS`, a lock holder's accesses, its fences and its release.
On such a batch a NumPy call costs a few microseconds of dispatch and
vectorises nothing, and the happens-before family (`hb`, `gwcp`) makes dozens
of them per event. So the steps that dominate there also have a path over
Python ints for batches of at most `MAX_LANES` lanes; wide batches keep the array
path, which is the fast one for them. Both paths give the same answers
(`tests/detect/test_scalar_paths.py` runs lock and atomic kernels with each forced).

Callers read `scalar_paths.MAX_LANES` when they choose, not a copy made at import, so
that a test can move the threshold.
"""

MAX_LANES = 4
"""The most lanes a batch (or pairs a check) may have to take a plain-Python path."""

MAX_TAKERS = 64
"""The most threads a lock may have had for `gwcp`'s rule (b) to look for the releases a thread does not know
thread by thread rather than over its arrays."""
