"""The shift report: the figures of every table and dealer (equal to a recount from
the journals), the alerts with who cleared them; as a page, JSON, CSV, HTML and PDF."""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
from pathlib import Path

from pypdf import PdfReader

from tests.floor.test_figures import T0, filled_store, recount_room, room  # noqa: F401
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in
from dealerbox.floor.telling import figures as F
from dealerbox.floor.telling import report as R
from dealerbox.floor.telling.floor_words import FloorWords
from dealerbox.floor.store import Store, store_engine

START, END = T0 - 600.0, T0 + 11 * 3600.0


def _report(path):
    engine = store_engine(path)
    F.Ledger().catch_up(engine)
    with Store(path) as store, engine.connect() as conn:
        out = R.shift_report(conn, store.alerts(open_only=False), START, END)
    engine.dispose()
    return out


def test_the_report_holds_every_table_and_dealer_with_the_figures_a_recount_gives(tmp_path, room):
    path = filled_store(tmp_path / "floor.sqlite", room)
    report = _report(path)
    expected = recount_room(room, START, END)
    assert report["tables"] == expected["tables"] and report["dealers"] == expected["dealers"]
    assert report["room"] == expected["room"]
    with Store(path) as store:
        alerts = [a for a in store.alerts(open_only=False) if START <= a["raised"] < END]
    assert len(report["alerts_open"]) + len(report["alerts_cleared"]) == len(alerts)
    assert report["alerts_cleared"] and all(a["cleared_by"] in ("sam", "ada") for a in report["alerts_cleared"])
    assert report["alerts_open"]


def test_the_csv_has_a_line_per_table_dealer_and_the_room(tmp_path, room):
    report = _report(filled_store(tmp_path / "floor.sqlite", room))
    rows = list(csv.reader(io.StringIO(R.report_csv(report))))
    ids = rows[0][2 + len(R.CSV_COLUMNS):]
    assert rows[0][:2 + len(R.CSV_COLUMNS)] == ["kind", "id", *R.CSV_COLUMNS]
    assert ids == [f"irregularities:{i}" for i in sorted(report["room"]["irregularities_by_id"])]
    assert [r[1] for r in rows[1:] if r[0] == "table"] == [t["table"] for t in report["tables"]]
    assert sum(1 for r in rows if r[0] == "dealer") == len(report["dealers"])
    (room_row,) = [r for r in rows if r[0] == "room"]
    assert int(room_row[2]) == report["room"]["hands"]


def test_the_pdf_and_the_html_file_are_made_from_the_same_report(tmp_path, room):
    report = _report(filled_store(tmp_path / "floor.sqlite", room))
    pdf = R.report_pdf(report)
    assert pdf.startswith(b"%PDF") and len(pdf) > 2000
    html = R.report_html(report)
    assert "<script" not in html and "@media print" in html
    assert all(t["table"] in html for t in report["tables"]) and "sam" in html


def test_dealerbox_floor_report_writes_the_files_asked_for(tmp_path, room):
    path = filled_store(tmp_path / "floor.sqlite", room)
    config = tmp_path / "floor.toml"
    config.write_text(f'[broker]\nca = "ca.crt"\ncert = "c.crt"\nkey = "c.key"\n[store]\npath = "{path}"\n')
    files = {kind: tmp_path / f"shift.{kind}" for kind in ("html", "csv", "pdf")}
    proc = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "report", "--config", str(config),
                           "--from", str(START), "--to", str(END),
                           *(a for kind, f in files.items() for a in (f"--{kind}", str(f)))],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"{recount_room(room, START, END)['room']['hands']} hands" in proc.stdout
    assert files["pdf"].read_bytes().startswith(b"%PDF") and "kind,id" in files["csv"].read_text()
    bad = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "report", "--config", str(config),
                          "--from", "2026-11-24T10:00:00"], capture_output=True, text=True)
    assert bad.returncode == 2 and "UTC offset" in bad.stderr


def test_the_report_page_json_and_csv_answer_a_signed_in_user_only(tmp_path, room):
    path = filled_store(tmp_path / "floor.sqlite", room)
    add_users(path, ("vera",))
    expected = recount_room(room, START, END)
    with WebProcess(tmp_path, path) as web:
        q = f"from={START}&to={END}"
        assert call(web, "GET", f"/api/report?{q}")[0] == 401
        cookie, _csrf = sign_in(web, "vera")
        status, _h, body = call(web, "GET", f"/api/report?{q}", cookie=cookie)
        assert status == 200 and body["room"] == expected["room"] and body["tables"] == expected["tables"]
        status, _h, page = call(web, "GET", f"/report?{q}", cookie=cookie)
        text = page if isinstance(page, str) else page.decode()
        assert status == 200 and "Shift report" in text and all(t["table"] in text for t in expected["tables"])
        status, headers, data = call(web, "GET", f"/report.csv?{q}", cookie=cookie)
        text = data if isinstance(data, str) else data.decode()
        assert status == 200 and text.startswith("kind,id,hands")
        assert call(web, "GET", "/report?from=yesterday", cookie=cookie)[0] == 400


def test_the_csv_carries_every_figure_the_api_gives(tmp_path, room):
    report = _report(filled_store(tmp_path / "floor.sqlite", room))
    rows = list(csv.reader(io.StringIO(R.report_csv(report))))
    header, (room_row,) = rows[0], [r for r in rows if r[0] == "room"]
    figures = report["room"]
    for key, value in figures.items():
        if isinstance(value, dict):
            continue
        assert key in header, key
        assert room_row[header.index(key)] == ("" if value is None else str(value)), key
    for irregularity, counted in figures["irregularities_by_id"].items():
        assert int(room_row[header.index(f"irregularities:{irregularity}")]) == counted["count"]
    assert {"dealing_seconds", "misdeals", "voids"} <= set(header)


def test_the_report_files_word_their_alerts_as_the_floor_map_and_link_with_a_base_url(tmp_path, room):
    path = filled_store(tmp_path / "floor.sqlite", room)
    config = tmp_path / "floor.toml"
    config.write_text(f'[broker]\nca = "ca.crt"\ncert = "c.crt"\nkey = "c.key"\n[store]\npath = "{path}"\n')
    html, pdf = tmp_path / "shift.html", tmp_path / "shift.pdf"

    def report(*more):
        proc = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "report", "--config", str(config),
                               "--from", str(START), "--to", str(END), "--html", str(html), "--pdf", str(pdf),
                               *more], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return html.read_text()

    with Store(path) as store:
        alerts = [a for a in store.alerts(open_only=False) if START <= a["raised"] < END]
    words = FloorWords().first_headline
    page = report()
    # Each alert as the floor map says it (``Floor call at T01: ...``), never ``kind: raw text``.
    for a in alerts:
        assert words(a) in page and f"{a['kind']}: {a['text']}" not in page, a
    assert "href=" not in page   # no address given: a file links nowhere
    page = report("--base-url", "https://floor.example/")
    hands = [f'href="https://floor.example/hands/{a["table"]}/{a["seq"]}"' for a in alerts if a.get("seq")]
    assert hands and all(h in page for h in hands)
    assert 'href="https://floor.example/tables/' in page
    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.read_bytes())).pages)
    assert words(alerts[0]).split(":")[0] in text
    # In the language of whoever asks for the files (--language), whatever the room's.
    czech = FloorWords("cs").first_headline
    page = report("--language", "cs")
    for a in alerts:
        assert czech(a) in page, a
    assert czech(alerts[0]) != words(alerts[0])
    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.read_bytes())).pages)
    assert czech(alerts[0]).split(":")[0] in text


def test_floor_report_language_writes_the_summary_and_the_files_in_the_askers_language(tmp_path, room):
    path = filled_store(tmp_path / "floor.sqlite", room)
    config = tmp_path / "floor.toml"
    config.write_text(f'[broker]\nca = "ca.crt"\ncert = "c.crt"\nkey = "c.key"\n[store]\npath = "{path}"\n'
                      '[web]\ntime_zone = "Europe/Prague"\nlanguage = "en"\n')
    files = {kind: tmp_path / f"směna.{kind}" for kind in ("html", "csv", "pdf")}
    proc = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "report", "--config", str(config),
                           "--from", str(START), "--to", str(END), "--language", "cs",
                           *(a for kind, f in files.items() for a in (f"--{kind}", str(f)))],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    hands = recount_room(room, START, END)["room"]["hands"]
    # The summary for whoever ran it: Czech words, a Czech moment with the zone, a decimal comma.
    assert re.match(r"směna \d{1,2}\. \d{1,2}\. \d{4} \d{1,2}:\d\d SEL?Č až ", proc.stdout), proc.stdout
    assert f"hry {hands}," in proc.stdout and re.search(r"nesrovnalostí na 100 her \d+,\d", proc.stdout)
    assert f"zapsáno: {files['pdf']}" in proc.stdout
    html = files["html"].read_text()
    assert '<html lang="cs">' in html and "Zpráva o směně: " in html and "Krupiéři" in html
    assert "Vyřízená upozornění podle inspektora" in html and "Alerts raised" not in html
    # The CSV is for machines: its columns and values stay as the API's.
    assert files["csv"].read_text().startswith("kind,id,hands,")
    pdf = files["pdf"].read_bytes()
    text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages))
    for words in ("Zpráva o směně", "Stoly", "Krupiéři", "celý sál", "nesrovnalostí na 100 her", "Chyby snímání",
                  "vyřídil", "strana 1/"):
        assert words in text, words
    assert not re.search(r"\b\d+\.\d\b", text)
    shot_dir = os.environ.get("FLOOR_SCREENSHOTS")
    if shot_dir:  # kept for people to look at, as the screenshots are
        (Path(shot_dir) / "report-cs.pdf").write_bytes(pdf)
