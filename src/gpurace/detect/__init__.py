"""Detectors that consume the simulator's event stream and produce findings."""
