"""The floor's own writer of Prometheus's text format gives the same bytes as the library's
``generate_latest``, whatever the families hold: counters (with their ``_created``), gauges,
label values that need escaping, timestamps, documentation with a backslash and a newline;
and a family it does not write itself (a histogram, a label name to escape) goes through the
library, in its place."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from dealerbox.floor.web.exposition import exposition


class Families:
    """A collector yielding fixed families."""

    def __init__(self, *families):
        self.families = families

    def collect(self):
        return list(self.families)


def test_the_text_is_the_librarys_byte_for_byte():
    registry = CollectorRegistry(auto_describe=False)
    filed = CounterMetricFamily("floor_lines_filed", "Lines filed\\ per table\nsecond line", labels=["table"])
    for table, n in (("T1", 0), ('T "2"', 12), ("T\\3\n", 3.5), ("Stůl 4", 10**12)):
        filed.add_metric([table], n)
    gauge = GaugeMetricFamily("floor_lag_seconds", "Lag", labels=["table", "why"])
    gauge.add_metric(["T1", "chain"], 0.1 + 0.2)
    gauge.add_metric(["T2", "protocol"], float("inf"))
    gauge.add_metric(["T3", "x"], float("nan"), timestamp=1_800_000_000.25)
    registry.register(Families(GaugeMetricFamily("floor_up", "Up", value=1), filed, gauge,
                               GaugeMetricFamily("floor_empty", "No samples", labels=["kind"])))
    Counter("signins_failed", "Failed sign-ins", namespace="floor", registry=registry).inc(3)
    Histogram("floor_took_seconds", "A histogram: the library writes it", registry=registry).observe(0.3)
    fast, library = exposition(registry), generate_latest(registry)
    assert fast == library
    assert b'floor_lines_filed_total{table="T \\"2\\""} 12.0' in fast and b"floor_signins_failed_created" in fast
    assert b"floor_took_seconds_bucket" in fast


def test_a_label_name_the_fast_path_does_not_know_goes_through_the_library():
    registry = CollectorRegistry(auto_describe=False)
    odd = GaugeMetricFamily("floor_odd", "A label name with a dot", labels=["table.name"])
    odd.add_metric(["T1"], 1)
    plain = GaugeMetricFamily("floor_plain", "Plain", labels=["table"])
    plain.add_metric(["T1"], 2)
    registry.register(Families(odd, plain))
    assert exposition(registry) == generate_latest(registry)
