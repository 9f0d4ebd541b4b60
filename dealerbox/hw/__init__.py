"""Drivers for the real hardware. Each imports its Pi-only library only when opened."""
