"""This machine's CPU time to a Raspberry Pi 4's, for Python code: one stated factor and its source.

The source is a published run of the n-body benchmark (the Computer Language
Benchmarks Game's planets: the Sun and the four gas giants, every pair's pull
each step) in Python on a Raspberry Pi 4 Model B (4 GB, Cortex-A72 at 1.5 GHz,
``performance`` governor, no throttling): 5,000,000 steps in 158.263 s, i.e.
31.65 us a step (:data:`PI4_SOURCE`). :func:`pi4_cpu_factor` runs the same
algorithm here, on the same data, and divides.

What the source leaves open, and which way it leans: it does not say which
Python ran (a Raspberry Pi OS of its time shipped 3.7; the box runs 3.11, which
is faster at this kind of code) nor give its program (this one follows the
Benchmarks Game's plain-Python version: lists of floats and precomputed pairs).
An older Python on the Pi makes the factor larger than a Pi with the box's
Python would show, so figures scaled by it err on the slow side.

Time here is the calibrating thread's CPU time (``time.thread_time``), the
least of a few runs: the figure follows this machine's processor, not how busy
it is.
"""

from __future__ import annotations

import math
import time

#: Where the Pi 4's time comes from.
PI4_SOURCE = ("https://chaitanyamehta.github.io/projects/performance-analysis-of-programming-languages "
              "(n-body, 5,000,000 steps, Python, Raspberry Pi 4 B at 1.5 GHz: 158.263 s)")
#: The Pi 4's time for one step of the n-body benchmark in Python, in microseconds.
PI4_US_PER_STEP = 158.263e6 / 5_000_000

_DAYS_PER_YEAR = 365.24
_SOLAR_MASS = 4 * math.pi * math.pi
# Position (AU), velocity (AU a day) and mass (solar masses) of the Sun and the gas
# giants: the benchmark's own starting state.
_PLANETS = (
    ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 1.0),
    ((4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01),
     (1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05), 9.54791938424326609e-04),
    ((8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01),
     (-2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05), 2.85885980666130812e-04),
    ((1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01),
     (2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05), 4.36624404335156298e-05),
    ((1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01),
     (2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05), 5.15138902046611451e-05),
)


def _system() -> list[tuple[list[float], list[float], float]]:
    bodies = [(list(pos), [v * _DAYS_PER_YEAR for v in vel], m * _SOLAR_MASS) for pos, vel, m in _PLANETS]
    # Give the Sun the momentum that makes the system's total zero.
    px = py = pz = 0.0
    for _pos, (vx, vy, vz), m in bodies:
        px, py, pz = px + vx * m, py + vy * m, pz + vz * m
    sun_v, sun_m = bodies[0][1], bodies[0][2]
    sun_v[:] = [-px / sun_m, -py / sun_m, -pz / sun_m]
    return bodies


def _energy(bodies) -> float:
    e = 0.0
    for i, ((x, y, z), (vx, vy, vz), m) in enumerate(bodies):
        e += 0.5 * m * (vx * vx + vy * vy + vz * vz)
        for (x2, y2, z2), _v2, m2 in bodies[i + 1:]:
            e -= m * m2 / math.sqrt((x - x2) ** 2 + (y - y2) ** 2 + (z - z2) ** 2)
    return e


def nbody(steps: int, dt: float = 0.01) -> float:
    """Advance the planets *steps* steps of *dt*; their energy at the end (it barely moves)."""
    bodies = _system()
    pairs = [(bodies[i], bodies[j]) for i in range(len(bodies)) for j in range(i + 1, len(bodies))]
    for _ in range(steps):
        for (p1, v1, m1), (p2, v2, m2) in pairs:
            dx, dy, dz = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
            mag = dt * (dx * dx + dy * dy + dz * dz) ** -1.5
            k1, k2 = m1 * mag, m2 * mag
            v1[0] -= dx * k2
            v1[1] -= dy * k2
            v1[2] -= dz * k2
            v2[0] += dx * k1
            v2[1] += dy * k1
            v2[2] += dz * k1
        for pos, vel, _m in bodies:
            pos[0] += dt * vel[0]
            pos[1] += dt * vel[1]
            pos[2] += dt * vel[2]
    return _energy(bodies)


def us_per_step(steps: int = 20_000, runs: int = 5) -> float:
    """This machine's CPU microseconds for one n-body step: the least of *runs* runs of *steps*."""
    best = math.inf
    for _ in range(runs):
        start = time.thread_time()
        nbody(steps)
        best = min(best, time.thread_time() - start)
    return best / steps * 1e6


def pi4_cpu_factor(steps: int = 20_000, runs: int = 5) -> float:
    """How many times longer a Raspberry Pi 4 takes for the CPU time this machine spends (see the module)."""
    return PI4_US_PER_STEP / us_per_step(steps, runs)
