# @launch --grid 1 --block 32 --arg f32:32
# @expect_error exits_at_import.py: numba-cuda could not compile it:
# @expect_error the compiling process ended with status 3
# A file that ends the process importing it: gpurace, which never imports
# it itself, reports that the compile gave no answer.
import os

os._exit(3)
