"""The technician's sim console (``dealerbox console``): a simulated table on a
terminal screen, driven from the keyboard or from a scenario file."""
