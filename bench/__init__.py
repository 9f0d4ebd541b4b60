"""Benchmarks behind ``make bench``. Each ``bench_<area>.py`` exposes ``run() -> dict``."""
