// Included by a CuPy kernel of tests/frontend/test_cupy.py through its -I option.
#define FACTOR 2
