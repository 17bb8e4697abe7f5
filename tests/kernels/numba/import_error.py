# @launch --grid 1 --block 32 --arg f32:32
# @expect_error import_error.py:9: importing the file failed: RuntimeError: this file needs a GPU at import
# A file whose top level fails when imported: the message names the line. What
# it prints goes to gpurace's stderr, never into the compiled answer.
from numba import cuda

print('{"ok": "printed by the kernel file"}')

raise RuntimeError("this file needs a GPU at import")


@cuda.jit
def never_compiled(x):
    x[0] = 1
