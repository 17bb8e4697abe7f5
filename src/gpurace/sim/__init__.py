"""SIMT simulation of one kernel launch, producing the event stream."""
