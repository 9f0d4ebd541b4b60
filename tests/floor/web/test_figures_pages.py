"""Figures people read (issue 32, points 2 and 4): the table's and the dealer's pages and
the shift report with one decimal, a dash (with its legend) where there is nothing to
count, shift presets and date-time inputs in the floor's zone, the range in the title as
local times with the zone, charts drawn from zero with every series in the legend and
a sentence for sparse data; the report's alerts linked to their hands, its CSV, PDF and
print one click away, its rows and columns labelled right."""

from __future__ import annotations

import csv
import io
import re
import urllib.parse

import pytest
from markupsafe import escape
from pypdf import PdfReader
from starlette.requests import Request

from dealerbox.floor.telling import figure_text as FT
from dealerbox.floor.telling import report as R
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.store import Store
from dealerbox.floor.web import charts as C
from dealerbox.floor.web.auth import Refused
from dealerbox.floor.telling.floor_words import FloorWords
from dealerbox.floor.web.params import LATEST_MOMENT, page_range
from dealerbox.floor.web.range_form import range_controls

from tests.floor.test_figures import T0, filled_store, recount_room, room  # noqa: F401
from tests.floor.test_report import _report
from tests.floor.web.test_app import WebProcess, add_users, call, connection, sign_in

PRAGUE = FloorClock("Europe/Prague")
START, END = T0 - 600.0, T0 + 11 * 3600.0
#: 2026-11-26 12:00 UTC, a Thursday (13:00 CET).
NOON = 1795694400.0


def _text(body) -> str:
    return body if isinstance(body, str) else body.decode()


def _raw(web, path: str, cookie: str) -> tuple[int, dict, bytes]:
    """A GET's status, headers and body as bytes (:func:`call` decodes text)."""
    conn = connection(web)
    try:
        conn.request("GET", path, headers={"Cookie": cookie})
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def _request(query: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/", "query_string": query.encode(),
                    "headers": []})


def _hours(values: list[tuple[int, float, int]], first: float = NOON) -> list[dict]:
    """``figures.hourly`` rows from (hands, dealing seconds, irregularities) per hour."""
    return [{"hour": first + 3600 * i, "hands": hands, "dealing_seconds": dealing,
             "hands_per_hour": hands * 3600 / dealing if dealing else None, "irregularities": irr,
             "irregularities_per_100_hands": irr * 100 / hands if hands else None}
            for i, (hands, dealing, irr) in enumerate(values)]


# ------------------------------------------------------------------ formatting


@pytest.mark.parametrize("value, shown", [(329.485, "329.5"), (5.3333, "5.3"), (0, "0.0"), (0.0, "0.0"),
                                          (-0.01, "0.0"), (12, "12.0"), (None, "–"), (float("nan"), "–")])
def test_a_figure_reads_with_one_decimal_and_nothing_is_a_dash(value, shown):
    assert FT.one_decimal(value) == shown


@pytest.mark.parametrize("seconds, shown", [(42.4, "42 s"), (200, "3 min 20 s"), (120, "2 min"),
                                            (3900, "1 h 5 min"), (7200, "2 h"), (None, "–")])
def test_a_duration_reads_in_minutes_and_seconds(seconds, shown):
    assert FT.duration(seconds) == shown


def test_a_range_reads_as_local_times_with_the_zone():
    assert FT.span(PRAGUE, NOON - 3600, NOON) == "Thu 26 Nov 2026, 12:00 to 13:00 CET"
    assert FT.span(PRAGUE, NOON - 86400, NOON) == "Wed 25 Nov 2026, 13:00 CET to Thu 26 Nov 2026, 13:00 CET"
    # Across the change to summer time each end names its own zone.
    spring = PRAGUE.parse_local("2027-03-28T00:00")
    assert FT.span(PRAGUE, spring, spring + 4 * 3600) == \
        "Sun 28 Mar 2027, 00:00 CET to Sun 28 Mar 2027, 05:00 CEST"


# ------------------------------------------------------------------ the range a page shows


def test_the_presets_are_the_clocks_and_the_inputs_are_read_in_the_floors_zone():
    now = NOON + 1800
    shown = page_range(_request("preset=this_shift"), PRAGUE, now)
    assert (shown.start, shown.end, shown.preset) == (*PRAGUE.presets(now)["this_shift"], "this_shift")
    shown = page_range(_request("start=2026-11-26T06:00&end=2026-11-26T14:00"), PRAGUE, now)
    assert (shown.start, shown.end) == (PRAGUE.parse_local("2026-11-26T06:00"), NOON + 3600)
    # The API's epoch and ISO values go on working; an input left empty is not given.
    shown = page_range(_request(f"from={NOON - 7200}&to=2026-11-26T12:00:00Z&start=&end="), PRAGUE, now)
    assert (shown.start, shown.end, shown.preset) == (NOON - 7200, NOON, None)
    assert page_range(_request(""), PRAGUE, now)[:2] == (now - 12 * 3600, now)
    controls = range_controls(PRAGUE, page_range(_request("preset=today"), PRAGUE, now))
    assert controls["start"] == "2026-11-26T00:00" and controls["end"] == "2026-11-26T13:30"
    assert controls["zone"] == "Europe/Prague (CET)" and controls["preset_words"] == "Today"
    assert [p["href"] for p in controls["presets"]] == [
        "?preset=this_shift", "?preset=last_shift", "?preset=today", "?preset=yesterday"]
    assert [p["current"] for p in controls["presets"]] == [False, False, True, False]
    assert dict(urllib.parse.parse_qsl(controls["query"])) == {"from": repr(PRAGUE.parse_local("2026-11-26T00:00")),
                                                               "to": repr(now)}


@pytest.mark.parametrize("query, says", [
    ("preset=tomorrow", "preset"), ("preset=today&from=1", "from"), ("preset=today&start=2026-11-26T06:00", "start"),
    ("start=yesterday", "start"), ("start=2026-11-26T06:00&from=1", "not both"), ("end=2026-11-26 06:00", "end"),
    ("start=99999-01-01T00:00", "start"), ("start=0001-01-01T00:00", "start"), ("end=2999-12-31T23:59:59+01:00", "end"),
    ("start=2026-11-26T14:00&end=2026-11-26T06:00", "before"), ("start=2024-01-01T00:00&end=2026-01-01T00:00", "at most"),
    ("end=3500-01-01T00:00", "end"), ("to=1e13", "to"),
])
def test_a_bad_range_is_a_400_naming_it(query, says):
    with pytest.raises(Refused) as refused:
        page_range(_request(query), PRAGUE, NOON)
    assert refused.value.status == 400 and says in refused.value.reason, refused.value.reason


def test_the_latest_local_time_a_page_takes_stays_inside_the_apis_range():
    assert page_range(_request("end=2999-12-31T20:00"), PRAGUE, NOON).end < LATEST_MOMENT


# ------------------------------------------------------------------ charts


def _y_labels(svg: str) -> list[float]:
    axis = re.search(r'<g class="axis y[^"]*">(.*?)</g>\s*</g>', svg, re.S) or re.search(
        r'<g class="axis y[^"]*">(.*)', svg, re.S)
    return [float(v) for v in re.findall(r'<text[^>]*>([0-9.]+)</text>', axis.group(1))]


def _bars(svg: str, serie: int) -> int:
    """How many bars of series *serie* the chart draws (a zero is a bar of no height)."""
    block = re.search(rf'<g class="series serie-{serie} [^"]*">(.*?)</g>\s*</g>', svg, re.S).group(1)
    return len(re.findall(r'<rect[^>]*class="rect', block))


def _legend(svg: str) -> list[str]:
    return re.findall(r'class="legend[^"]*">.*?<text[^>]*>([^<]+)</text>', svg, re.S)


def test_a_chart_starts_its_y_axis_at_zero_even_when_every_value_is_high():
    hours = _hours([(30, 1800.0, 17), (30, 1800.0, 16), (30, 1800.0, 18), (31, 1800.0, 17)])
    room_hours = _hours([(60, 3600.0, 33), (62, 3600.0, 34), (60, 3600.0, 31), (61, 3600.0, 32)])
    svg = C.irregularity_chart(hours, room_hours, "N", PRAGUE, title="Irregularities", who="table T01")
    labels = _y_labels(svg)
    assert labels[0] == 0.0 and labels[-1] >= 60.0 and 4 <= len(labels) <= 7, labels
    labels = _y_labels(C.hands_per_hour_chart(hours, "N", PRAGUE, title="Hands per hour"))
    assert labels[0] == 0.0 and labels[-1] >= 62.0, labels
    assert C.y_labels([329.485]) == [0.0, 100.0, 200.0, 300.0, 400.0]
    assert C.y_labels([None, None]) == [0.0, 1.0]


def test_every_series_is_in_the_legend_even_one_with_no_hands_where_the_room_has_some():
    room_hours = _hours([(60, 3600.0, 3), (62, 3600.0, 4), (60, 3600.0, 1)])
    svg = C.irregularity_chart(_hours([(20, 1200.0, 1), (21, 1200.0, 0), (0, 0.0, 0)]), room_hours, "N", PRAGUE,
                               title="Irregularities per 100 hands", who="dealer 1042 (Jana Novakova)")
    assert _legend(svg) == ["dealer 1042 (Jana Novakova)", "the room"]
    # Two series, two sets of bars: a table equal to the room is not hidden behind it.
    assert _bars(svg, 0) == 2 and _bars(svg, 1) == 3
    # The hands-per-hour chart names its one series.
    assert _legend(C.hands_per_hour_chart(room_hours, "N", PRAGUE, title="Hands per hour")) == ["hands per hour"]


def test_the_charts_labels_are_local_hours_and_never_crowded():
    day = _hours([(10, 900.0, 1)] * 24)
    svg = C.hands_per_hour_chart(day, "N", PRAGUE, title="Hands per hour")
    x_axis = re.search(r'<g class="axis x[^"]*">(.*?)</g>\s*</g>', svg, re.S).group(1)
    shown = re.findall(r"<text[^>]*>([^<]+)</text>", x_axis)
    assert shown[0] == "13:00" and len(shown) <= C.MAX_LABELS, shown
    assert "hour (CET)" in svg
    week = _hours([(10, 900.0, 1)] * (24 * 7))
    bars, axis = C.buckets(week, PRAGUE)
    assert axis == "day (CET)" and len(bars) == 8 and bars[1]["label"] == "Fri 27 Nov"
    assert bars[1]["hands"] == 240 and bars[1]["hands_per_hour"] == pytest.approx(40.0)


def test_sparse_data_gets_a_sentence_never_an_empty_chart():
    nothing = _hours([(0, 0.0, 0)] * 5)
    for svg in (C.hands_per_hour_chart(nothing, "N", PRAGUE, title="Hands per hour"),
                C.irregularity_chart(nothing, nothing, "N", PRAGUE, title="Irregularities", who="table T09"),
                C.hands_per_hour_chart([], "N", PRAGUE, title="Hands per hour")):
        assert "<svg" not in svg and "no hands in this range" in svg
    one = _hours([(0, 0.0, 0), (12, 1500.0, 1), (0, 0.0, 0)])
    svg = C.hands_per_hour_chart(one, "N", PRAGUE, title="Hands per hour")
    assert svg.count("<svg") == 1 and "only one hour of this range has hands, 14:00 CET: 28.8 hands per hour" in svg
    svg = C.irregularity_chart(one, _hours([(30, 3000.0, 3)] * 3), "N", PRAGUE, title="Irr.", who="table T01")
    assert "table T01 8.3, the room 10.0" in svg


def test_a_chart_carries_the_nonce_and_no_script():
    svg = C.hands_per_hour_chart(_hours([(10, 900.0, 1)] * 3), "abc", PRAGUE, title="Hands per hour")
    assert "<script" not in svg and '<style nonce="abc"' in svg and '<svg role="img"' in svg
    assert " style=" not in svg  # an inline style the page's CSP would refuse


# ------------------------------------------------------------------ the report's sections, CSV, PDF


def test_the_reports_rows_and_columns_are_labelled_and_every_alert_links_to_its_hand(tmp_path, room):
    report = _report(filled_store(tmp_path / "floor.sqlite", room))
    sections = {s["id"]: s for s in R.report_sections(report, PRAGUE, {"1042": "Jana Novakova"})}
    clearing = sections["report-clearing"]
    assert clearing["columns"][:2] == ["supervisor", "alerts cleared"]
    assert all(row[0]["text"] in ("sam", "ada") for row in clearing["rows"])  # no "still open" under "cleared"
    assert any(n.startswith(f"Still open: {len(report['alerts_open'])} alert") for n in clearing["notes"])
    alerts = sections["report-alerts"]
    assert len(alerts["rows"]) == len(report["alerts_open"]) + len(report["alerts_cleared"])
    for row, alert in zip(alerts["rows"], report["alerts_open"] + report["alerts_cleared"]):
        hand = row[alerts["columns"].index("hand")]
        assert hand["href"] == f"/hands/{alert['table']}/{alert['seq']}"
        # By its number at its table, as its story names it (the figures file every hand here).
        number = alert["hand_number"]
        assert isinstance(number, int) and number >= 1
        assert hand["text"] == (f"the first, hand {number}" if alert["count"] > 1 else f"hand {number}")
        assert row[0]["text"].endswith(" CET") and row[0]["text"] == PRAGUE.stamp(alert["raised"])
    dealers = sections["report-dealers"]
    wrong = dealers["columns"].index("wrong corrections per 100 corrections")
    for row, figures in zip(dealers["rows"], report["dealers"]):
        value = figures["wrong_corrections_per_100_corrections"]
        assert row[wrong]["text"] == (FT.NOTHING if value is None else FT.one_decimal(value))
        assert row[wrong]["none"] == (value is None)
    assert any(r[0]["text"] == "1042 Jana Novakova" and r[0]["href"] == "/dealers/1042" for r in dealers["rows"])
    assert FT.NOTHING_LEGEND in dealers["notes"]
    cells = [c["text"] for s in sections.values() for r in s["rows"] for c in r]
    assert cells and not [c for c in cells if re.fullmatch(r"\d+\.\d{2,}", c)], "more than one decimal"
    assert "" not in [c["text"] for r in sections["report-tables"]["rows"] for c in r]
    # The standalone file has no link out; the page's have the paths alone.
    html = R.report_html(report, {"1042": "Jana Novakova"}, PRAGUE)
    assert "href=" not in html and "1042 Jana Novakova" in html and "@media print" in html


def test_the_pdf_says_what_the_page_says_with_links_to_the_hands(tmp_path, room):
    report = _report(filled_store(tmp_path / "floor.sqlite", room))
    pdf = R.report_pdf(report, {"1042": "Jana Nováková"}, PRAGUE, "https://floor.example")
    reader = PdfReader(io.BytesIO(pdf))
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert R.report_title(report, PRAGUE) in text.replace("\n", " ")
    for heading in ("Tables", "Dealers", "Alerts cleared, by supervisor", "Sensing faults"):
        assert heading in text
    assert "1042 Jana Nováková" in text and "wrong" in text and FT.NOTHING in text
    assert all(t["table"] in text for t in report["tables"])
    links = {a.get_object()["/A"]["/URI"] for page in reader.pages for a in page.get("/Annots", [])}
    wanted = {f"https://floor.example/hands/{a['table']}/{a['seq']}"
              for a in report["alerts_open"] + report["alerts_cleared"] if a["seq"]}
    assert wanted and wanted <= links


def test_the_pdfs_columns_of_figures_align_right_and_fit_the_page():
    rows = [[{"text": "T01"}, {"text": "14"}, {"text": "50.6"}, {"text": "10 h 35 min"}, {"text": "seen to"}],
            [{"text": "the room"}, {"text": "no hands"}, {"text": "–"}, {"text": "42 s"}, {"text": ""}]]
    assert PDF.figure_columns(rows) == [False, True, True, True, False]
    heads = ["table", "hands", "hands per hour", "longest time", "note"]
    widths = PDF.column_widths(heads, rows, 100.0, lambda text: 2.0 * len(text))
    assert sum(widths) <= 100.0 + 1e-9 and min(widths) >= 14.0
    narrow = PDF.column_widths(heads, rows * 3, 40.0, lambda text: 2.0 * len(text))
    assert sum(narrow) == pytest.approx(40.0)


# ------------------------------------------------------------------ the pages, served


@pytest.fixture(scope="module")
def served(tmp_path_factory, room):
    directory = tmp_path_factory.mktemp("figures-pages")
    path = filled_store(directory / "floor.sqlite", room)
    add_users(path, ("vera", "sam"))
    with Store(path) as store:
        store.set_dealer_name("1042", "Jana Novakova", START)
    with WebProcess(directory, path, time_zone="Europe/Prague") as web:
        yield web, sign_in(web, "sam")[0], sign_in(web, "vera")[0]


def test_the_table_page_reads_at_a_glance(served, room):
    web, cookie, _viewer = served
    expected = next(r for r in recount_room(room, START, END)["tables"] if r["table"] == "T01")
    status, _h, body = call(web, "GET", f"/tables/T01?from={START}&to={END}", cookie=cookie)
    page = _text(body)
    assert status == 200
    title = re.search(r'<h2 id="pit-title">(.*?)</h2>', page).group(1)
    assert title == f"Table T01: {FT.span(PRAGUE, START, END)}".replace("&", "&amp;")
    assert '<input type="datetime-local" id="range-start" name="start" ' \
           f'value="{PRAGUE.input_value(START)}">' in page
    assert f'value="{PRAGUE.input_value(END)}"' in page and "times in Europe/Prague" in page
    for preset, words in (("this_shift", "This shift"), ("last_shift", "Last shift"), ("today", "Today"),
                          ("yesterday", "Yesterday")):
        assert f'<a href="?preset={preset}">{words}</a>' in page
    main = page.split("<main>")[1].split('<div class="charts">')[0]
    assert not re.findall(r">\d+\.\d{2,}<", main), "a figure with more than one decimal"
    assert f"<td>hands per hour</td><td>{FT.one_decimal(expected['hands_per_hour'])}</td>" in main
    assert "None" not in main and FT.NOTHING_LEGEND in page
    assert "<svg" in page and "dealer_chart" not in page
    status, _h, body = call(web, "GET", "/tables/T01?preset=today", cookie=cookie)
    assert status == 200 and '<a href="?preset=today" aria-current="page">Today</a>' in _text(body)
    assert "Table T01, today: " in _text(body)


def test_a_table_with_no_hands_says_so(served):
    web, cookie, _viewer = served
    status, _h, body = call(web, "GET", f"/tables/T09?from={START}&to={END}", cookie=cookie)
    page = _text(body)
    assert status == 200 and "<svg" not in page
    assert '<tr><td>hands</td><td class="none">no hands</td>' in page
    assert '<tr><td>hands per hour</td><td class="none">–</td>' in page
    assert page.count("no hands in this range, so nothing to chart.") == 2


def test_the_dealer_page_takes_local_date_times_and_leaves_room_for_the_control_chart(served, room):
    web, cookie, viewer = served
    start, end = PRAGUE.input_value(START), PRAGUE.input_value(END)
    status, _h, body = call(web, "GET", f"/dealers/1042?start={start}&end={end}", cookie=cookie)
    page = _text(body)
    assert status == 200 and "Dealer 1042 (Jana Novakova): " in page
    assert f'value="{start}"' in page and 'href="/tables/T01"' in page
    legend = re.findall(r'class="legend[^"]*">.*?<text[^>]*>([^<]+)</text>', page, re.S)
    assert "dealer 1042 (Jana Novakova)" in legend and "the room" in legend
    assert "Jana" not in _text(call(web, "GET", f"/dealers/1042?start={start}&end={end}", cookie=viewer)[2])
    for query in ("start=2026-13-01T00:00", "start=tomorrow", "preset=next_shift", "end=99999-01-01T00:00",
                  "start=2026-11-26T06:00&from=0"):
        status, _h, body = call(web, "GET", f"/dealers/1042?{query}", cookie=cookie)
        assert status == 400, (query, status)


def test_the_report_page_has_its_files_one_click_away_and_its_links(served, room):
    web, cookie, _viewer = served
    q = f"from={START}&to={END}"
    status, _h, body = call(web, "GET", f"/report?{q}", cookie=cookie)
    page = _text(body)
    assert status == 200
    files = re.search(r'<p class="files" id="report-files">(.*?)</p>', page, re.S).group(1)
    exact = urllib.parse.urlencode({"from": repr(float(START)), "to": repr(float(END))}).replace("&", "&amp;")
    for link in (f'href="/report.csv?{exact}"', f'href="/report.pdf?{exact}"'):
        assert link in files
    assert '<button type="button" id="print">Print</button>' in files and "window.print()" in page
    assert "@media print" in page
    with Store(web.directory / "floor.sqlite") as store:
        alerts = [a for a in store.alerts(open_only=False) if START <= a["raised"] < END and a["seq"]]
    # Each links its hand, named by its number at its table.
    assert alerts and all(re.search(f'<a href="/hands/{a["table"]}/{a["seq"]}">{"the first, " if a["count"] > 1 else ""}'
                                    r'hand \d+</a>', page) for a in alerts)
    # What each alert says reads as on the floor map, in plain words, as it was first raised.
    words = FloorWords("en", PRAGUE)
    assert all(str(escape(words.alert(dict(a, last_text=a["text"]))["headline"])) in page for a in alerts)
    assert "FOUR_CARD_FLOP" not in page.split('id="report-alerts"')[1].split("</table>")[0]
    assert "<th scope=\"col\">alerts cleared</th>" in page and ">still open<" not in page.split("report-alerts")[0]
    assert f"Shift report: {FT.span(PRAGUE, START, END)}" in page
    status, headers, body = call(web, "GET", f"/report.csv?{q}", cookie=cookie)
    rows = list(csv.reader(io.StringIO(_text(body))))
    assert status == 200 and rows[0][:3] == ["kind", "id", "hands"]
    assert 'filename="shift-report-' in headers["Content-Disposition"]
    status, headers, raw = _raw(web, f"/report.pdf?{q}", cookie)
    assert status == 200 and headers["Content-Type"] == "application/pdf"
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(raw)).pages)
    assert "1042 Jana Novakova" in text and "Alerts raised" in text
    status, _h, _b = call(web, "GET", "/report?preset=last_shift", cookie=cookie)
    assert status == 200
    assert call(web, "GET", "/report.pdf?start=nonsense", cookie=cookie)[0] == 400
    assert call(web, "GET", f"/report.pdf?{q}")[0] == 401
