"""Front end: compile CUDA sources to PTX and parse PTX into the module IR."""
