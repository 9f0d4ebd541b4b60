"""The tables' commissioning records on the floor, on SQLite and PostgreSQL: a table's
``commissioned`` line filed by the registry pass as one record with every figure and verdict,
exactly once; a record that is not the contract's refused with the reason, logged and alerted,
never filed, and never stopping the table's other lines; each table's last one judged against
the house's limit (``[commission]`` of floor.toml); the record as CSV."""

from __future__ import annotations

import copy
import csv
import io
import logging
import re
import time

import pytest

from dealerbox.domain import commission_advice as A
from dealerbox.domain import commission_figures as F
from dealerbox.errors import ConfigError
from dealerbox.floor.collecting.registry_pass import RegistryPass
from dealerbox.floor.operating.settings import load_commission, load_web
from dealerbox.floor.store.commissioning import CommissioningRefused, check_commissioning
from dealerbox.floor.telling import commissioning as C
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling import commission_words as W
from dealerbox.floor.telling.commission_words import advice_text
from dealerbox.floor.telling.language import Language
from tests.floor.commission_support import CONFIG, box_devices, record
from tests.floor.registry_support import TableJournal, deck_tags, file_journal
from tests.floor.test_registry import store  # noqa: F401  (a new store on each backend)

DAY = 86400.0
NOW = time.time()


def test_a_tables_commissioned_line_is_one_record_with_every_figure_filed_once(store):
    t01, t02 = TableJournal("T01"), TableJournal("T02")
    older = record(NOW - 40 * DAY, technician="jana", shoe_fails=True)
    newer = record(NOW - DAY, technician="tomas")
    t01.add(NOW - 40 * DAY, "commissioned", **older)
    t01.hand(NOW - 30 * DAY, deck_tags("Red 7"))          # the table deals between its runs
    last_seq = t01.add(NOW - DAY, "commissioned", **newer)
    t02.add(NOW - 2 * DAY, "tick")
    file_journal(store, t01)
    file_journal(store, t02)
    registry = RegistryPass(store)
    assert registry.catch_up() == []
    runs = store.commissionings("T01")
    assert [(r["technician"], r["ok"]) for r in runs] == [("tomas", True), ("jana", False)]   # the last first
    last = runs[0]
    assert last["seq"] == last_seq and last["table"] == "T01" and last["config"] == CONFIG
    assert last["at_text"] == newer["at"] and abs(last["at"] - (NOW - DAY)) < 1 and last["zone"] == "Europe/Prague"
    assert last["devices"] == newer["devices"]                # every device, verdict, advice and figure
    assert runs[1]["devices"] == older["devices"]
    assert [d["verdict"] for d in runs[1]["devices"] if d["device"] == "shoe"] == ["fail"]
    assert set(store.last_commissionings()) == {"T01"} and store.last_commissionings()["T01"]["seq"] == last_seq
    assert store.commissionings("T02") == []
    # Filed once: the pass again, another pass (another collector), and the lines sent again.
    file_journal(store, t01)
    assert registry.catch_up() == [] and RegistryPass(store).catch_up() == []
    assert len(store.commissionings("T01")) == 2 and store.alerts() == []


def test_the_record_carries_the_floors_measure_of_the_tables_clock_when_it_was_filed(store):
    """A table cannot measure its own offset from the floor: the record is filed with the
    floor's last measure (from the table's live health), or none when there was none yet."""
    t01, t02 = TableJournal("T01"), TableJournal("T02")
    t01.add(NOW - DAY, "commissioned", **record(NOW - DAY))
    t02.add(NOW - DAY, "commissioned", **record(NOW - DAY))
    file_journal(store, t01)
    file_journal(store, t02)
    store.update_table("T01", clock_offset=0.345, clock_offset_at=NOW - 100)
    assert RegistryPass(store).catch_up() == []
    store.update_table("T01", clock_offset=-30.0, clock_offset_at=NOW)   # later measures change no record
    t01_run, t02_run = store.commissionings("T01")[0], store.commissionings("T02")[0]
    assert (t01_run["clock_offset"], t01_run["clock_offset_at"]) == (0.345, pytest.approx(NOW - 100))
    assert (t02_run["clock_offset"], t02_run["clock_offset_at"]) == (None, None)
    clock = FloorClock("Europe/Prague")
    cells = {row[0]["text"]: row[1] for row in C.record_sections(t01_run, clock)[0]["rows"]}
    measured = cells["the table's clock, as the floor measured it before filing the run"]
    assert measured["text"].startswith("0.3 s ahead of the floor's (measured ") and not measured["flag"]
    cells = {row[0]["text"]: row[1] for row in C.record_sections(t02_run, clock)[0]["rows"]}
    assert cells["the table's clock, as the floor measured it before filing the run"]["none"]
    rows = list(csv.DictReader(io.StringIO(C.record_csv(t01_run))))
    assert {r["floor_clock_offset_s"] for r in rows} == {"0.345"}
    assert {r["floor_clock_offset_measured_utc"] for r in rows} == {C.R.iso(t01_run["clock_offset_at"])}
    assert {r["floor_clock_offset_s"] for r in csv.DictReader(io.StringIO(C.record_csv(t02_run)))} == {""}
    far = {**t01_run, "clock_offset": -4.0}
    cells = {row[0]["text"]: row[1] for row in C.record_sections(far, clock)[0]["rows"]}
    assert cells["the table's clock, as the floor measured it before filing the run"]["flag"]


def test_a_commissioning_read_again_after_a_restart_is_filed_once(store):
    # A hand still open when the pass stopped is read again from its first line by the next
    # pass, with the commissioning that came inside it.
    t01 = TableJournal("T01")
    t01.add(NOW - 100, "new_hand", players=2, hole_cards=2)
    t01.add(NOW - 90, "commissioned", **record(NOW - 90))
    file_journal(store, t01)
    assert RegistryPass(store).catch_up() == []
    filed = len(t01.lines)
    t01.add(NOW - 80, "button", name="hand_over")
    file_journal(store, t01, filed)
    assert RegistryPass(store).catch_up() == []          # a new pass: reads from the open hand's start
    assert len(store.commissionings("T01")) == 1 and store.alerts() == []


def event(fields: dict) -> dict:
    """*fields* as the ``event`` of a journal line."""
    return {"t": 3.0, "ev": "commissioned", **fields}


def _bad_records() -> list[tuple[dict, str]]:
    good = event(record(NOW - DAY))
    out = []

    def changed(reason, change):
        r = copy.deepcopy(good)
        change(r)
        out.append((r, reason))
    changed("'technician' must be non-empty text of up to 64 printable characters, not None",
            lambda r: r.pop("technician"))
    changed("'technician' must be non-empty text", lambda r: r.update(technician=""))
    changed("'at' must be an ISO 8601 time with its UTC offset, not '2026-12-02T14:05:00'",
            lambda r: r.update(at="2026-12-02T14:05:00"))
    changed("'at' must be an ISO 8601 time", lambda r: r.update(at="yesterday"))
    changed("'at' must be an ISO 8601 time", lambda r: r.update(at=1764680000))
    changed("'at' must be a time from 2000 to 9998", lambda r: r.update(at="1970-01-01T00:00:00+00:00"))
    changed("'zone' must be an IANA zone name", lambda r: r.update(zone="../../etc/passwd"))
    changed("'config' must be the config file's SHA-256", lambda r: r.update(config="C0" * 32))
    changed("'ok' must be true or false", lambda r: r.update(ok="yes"))
    changed("'ok' must be true exactly when no device failed",
            lambda r: r["devices"][4].update(verdict="fail", advice="check the antenna"))
    changed("'devices' must list", lambda r: r.update(devices=[]))
    changed("'devices' must list", lambda r: r.update(devices={"lcd": "pass"}))
    changed("'devices[0].device' must be one of", lambda r: r["devices"][0].update(device="printer"))
    changed("'devices[0].verdict' must be one of", lambda r: r["devices"][0].update(verdict="ok"))
    changed("'devices[0].advice' must be text", lambda r: r["devices"][0].update(advice=None))
    changed("'devices[3].advice' must be \"\" for a pass and say what to check or why for a skipped",
            lambda r: r["devices"][3].update(advice=""))
    changed("'devices[0]' must be an object of exactly", lambda r: r["devices"][0].pop("figures"))
    changed("'devices[0].figures[0].value' must be a number or null",
            lambda r: r["devices"][0]["figures"][0].update(value="96"))
    changed("'devices[0].figures[0].value' must be a number or null",
            lambda r: r["devices"][0]["figures"][0].update(value=True))
    changed("'devices[0].figures[0].ok' must be true or false", lambda r: r["devices"][0]["figures"][0].update(ok=1))
    changed("'devices[0].figures[0]' must be an object of exactly",
            lambda r: r["devices"][0]["figures"][0].update(colour="red"))
    changed("unknown key 'signature'", lambda r: r.update(signature="trust me"))
    changed("each once, not 'lcd'", lambda r: r.update(devices=[r["devices"][0], copy.deepcopy(r["devices"][0])]))
    changed("'ev' must be", lambda r: r.update(ev="commissioning"))
    return out


@pytest.mark.parametrize("bad,reason", _bad_records(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_record_whose_fields_are_not_the_contracts_is_refused_with_the_reason(bad, reason):
    with pytest.raises(CommissioningRefused, match=re.escape(reason)):
        check_commissioning(bad)
    assert check_commissioning(event(record(NOW - DAY)))["ok"] is True   # the record it was made from


def test_the_contracts_own_edges_are_taken():
    r = record(NOW - DAY, zone="")
    r["devices"][6]["figures"][0]["value"] = None      # not measured: null
    r["devices"] = r["devices"][4:5]                    # --only shoe
    checked = check_commissioning(event(r))
    assert checked["zone"] == "" and [d["device"] for d in checked["devices"]] == ["shoe"]
    assert check_commissioning({**event(record(NOW)), "id": 7})["ok"] is True


def test_garbage_is_refused_logged_and_alerted_and_the_tables_other_lines_are_filed(store, caplog):
    t01 = TableJournal("T01")
    for bad, _reason in _bad_records()[:6]:
        t01.add(NOW - 3 * DAY, "commissioned", **{k: v for k, v in bad.items() if k not in ("t", "ev")})
    t01.add(NOW - 3 * DAY, "commissioned", devices="x" * 10_000)   # most keys missing, a long value
    good_seq = t01.add(NOW - DAY, "commissioned", **record(NOW - DAY))
    t01.add(NOW - DAY, "deck_registered", deck="Red 7", back="red", tags=deck_tags("Red 7"))
    file_journal(store, t01)
    with caplog.at_level(logging.WARNING, logger="dealerbox.floor.store.commissioning"):
        alerts = RegistryPass(store).catch_up()
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 7 and "T01 seq 1 refused: 'technician' must be non-empty text" in refused[0].getMessage()
    # One alert of the table's, folded: counted once per refused line, saying the last reason.
    (alert,) = store.alerts()
    assert alert["kind"] == "protocol" and alert["count"] == 7 and alert["table"] == "T01"
    assert "commissioning record refused (seq 1): 'technician' must be non-empty text" in alert["text"]
    assert [r["seq"] for r in store.commissionings("T01")] == [good_seq]
    assert store.deck("Red 7")["registered_by"] == "a technician at T01"
    # Read again (another collector's pass), nothing is refused or alerted twice.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="dealerbox.floor.store.commissioning"):
        assert RegistryPass(store).catch_up() == []
    assert not caplog.records and store.alerts()[0]["count"] == 7


def test_each_tables_last_commissioning_is_judged_against_the_houses_limit():
    limit = C.CommissionLimit(max_age_days=30)
    never = C.commission_check(None, NOW, limit)
    assert never.state == "never" and never.mark == "never commissioned: no commissioning record has reached the floor"

    def row(at, **kw):
        r = check_commissioning(event(record(at, **kw)))
        return {**r, "table": "T01", "seq": 9}
    fresh = C.commission_check(row(NOW - 29.9 * DAY), NOW, limit)
    assert (fresh.state, fresh.mark, fresh.technician) == ("passed", None, "tomas")
    at_limit = C.commission_check(row(NOW - 30 * DAY + 60), NOW, limit)
    assert at_limit.state == "passed"                   # at the limit, not past it: no false alarm
    old = C.commission_check(row(NOW - 45.23 * DAY), NOW, limit)
    assert old.state == "outdated"
    assert old.mark == "last commissioned 45.2 days ago, longer than the house's limit of 30 days"
    failed = C.commission_check(row(NOW - DAY, shoe_fails=True), NOW, limit)
    assert failed.state == "failed" and failed.mark == "its last commissioning failed: Shoe reader"
    assert failed.attention > old.attention
    ahead = C.commission_check(row(NOW + DAY), NOW, limit)   # the table's clock ahead of the floor's
    assert ahead.state == "passed" and ahead.age_days == 0


def test_commission_section_of_floor_toml(tmp_path):
    path = tmp_path / "floor.toml"
    path.write_text("")
    assert load_commission(path) == C.CommissionLimit(90)        # the documented default
    path.write_text("[commission]\nmax_age_days = 365\n")
    assert load_commission(path) == C.CommissionLimit(365)
    path.write_text('[store]\npath = "floor.sqlite"\n[commission]\nmax_age_days = 30\n')
    assert load_web(path).commission == C.CommissionLimit(30)
    for body, key, expected in (('max_age_days = "30"', "commission.max_age_days",
                                 "days, a whole number from 1 to 3650"),
                                ("max_age_days = 0", "commission.max_age_days", "from 1 to 3650"),
                                ("max_age_days = 30.5", "commission.max_age_days", "a whole number"),
                                ("max_age_days = 4000", "commission.max_age_days", "from 1 to 3650"),
                                ("max_age = 30", "commission.max_age", "one of max_age_days")):
        path.write_text(f"[commission]\n{body}\n")
        with pytest.raises(ConfigError, match=key) as caught:
            load_commission(path)
        assert str(path) in str(caught.value) and expected in str(caught.value)
    path.write_text('[store]\npath = "floor.sqlite"\n[commission]\nmax_age_days = 0\n')
    with pytest.raises(ConfigError, match="commission.max_age_days"):
        load_web(path)                                          # the web view reads the file the same


def test_the_record_as_csv_has_stable_columns_a_line_per_figure_and_iso_times():
    r = {**check_commissioning(event(record(1764680700.0, shoe_fails=True))), "table": "T01", "seq": 12,
         "filed": 1764680760.0}
    rows = list(csv.DictReader(io.StringIO(C.record_csv(r))))
    assert tuple(rows[0]) == C.CSV_HEADER == (
        "table", "seq", "run_end_utc", "run_end_local", "zone", "filed_utc", "technician", "version", "config",
        "run_ok", "floor_clock_offset_s", "floor_clock_offset_measured_utc",
        "device", "verdict", "advice", "figure", "value", "unit", "bound", "figure_ok")
    figures = sum(max(1, len(d["figures"])) for d in r["devices"])
    assert len(rows) == figures
    assert {row["run_end_utc"] for row in rows} == {"2025-12-02T13:05:00Z"}
    assert {row["run_end_local"] for row in rows} == {"2025-12-02T14:05:00+01:00"}
    assert {row["filed_utc"] for row in rows} == {"2025-12-02T13:06:00Z"}
    slow = next(row for row in rows if row["figure"] == "time to first read, slowest card")
    assert (slow["device"], slow["verdict"], slow["value"], slow["unit"], slow["bound"], slow["figure_ok"]) == (
        "shoe", "fail", "212.0", "ms", "at most 150 ms", "false")
    assert "replace those two cards" in slow["advice"] and slow["run_ok"] == "false"
    leds = next(row for row in rows if row["device"] == "leds")
    assert leds["figure"] == "" and leds["verdict"] == "pass"
    clock = next(row for row in rows if row["figure"] == "offset from the floor")
    assert clock["value"] == ""                                 # not measured: empty, never 0
    sections = C.record_sections(r, FloorClock("Europe/Prague"))
    assert [c["text"] for c in sections[0]["rows"][0]] == ["ended", "Tue 02 Dec 2025, 14:05:00 CET"]
    assert sections[0]["rows"][-1][1]["text"] == "failed: Shoe reader" and sections[0]["rows"][-1][1]["flag"]
    shoe = next(s for s in sections if s["id"] == "figures-shoe")
    assert shoe["heading"] == "Shoe reader: failed"
    assert [c["text"] for c in shoe["rows"][1]] == [
        "time to first read, slowest card", "212 ms", "at most 150 ms", "no"]
    assert C.figure_value({"value": 41.25, "unit": "ms"}) == "41.2 ms"
    assert C.figure_value({"value": None, "unit": "s"}) == "not measured"
    # In Czech: a symbol unit is the reader's as it is, a word the floor knows takes its plural.
    cs = Language("cs", FloorClock("Europe/Prague"))
    assert C.figure_value({"value": 12.4, "unit": "GiB"}, cs) == "12,4 GiB"
    assert [C.figure_value({"value": n, "unit": "cards"}, cs) for n in (1, 3, 5)] == ["1 karta", "3 karty", "5 karet"]
    assert C.figure_value({"value": 2, "unit": "polls"}, Language("de")) == "2 Abfragen"


def _czech_figures(r: dict) -> dict[str, list[dict]]:
    sections = C.record_sections(r, FloorClock("Europe/Prague"), Language("cs", FloorClock("Europe/Prague")))
    return {s["id"]: s for s in sections}


def test_a_czech_reader_reads_the_boxs_figures_bounds_and_units_in_czech_and_a_newer_boxs_as_said():
    r = {**check_commissioning(event({**record(1764680700.0), "devices": box_devices()})), "table": "T01",
         "seq": 12, "filed": 1764680760.0}
    sections = _czech_figures(r)
    buttons = [[(c["text"], c["lang"]) for c in row] for row in sections["figures-buttons"]["rows"]]
    # The button's cap is a fact inside the Czech name; the bound's sign and number in the Czech forms.
    assert buttons[0] == [("zákmity tlačítka ROUND DONE", None), ("3,2 ms", None), ("≤\u00a025 ms", None),
                          ("ano", None)]
    assert buttons[1][:3] == [("FLOOR podrženo", None), ("2\u00a0612,5 ms", None), ("≥\u00a02\u00a0500 ms", None)]
    assert buttons[2][:3] == [("svítí jen červená LED", None), ("1", None), ("= 1 (ano)", None)]
    shoe = [[(c["text"], c["lang"]) for c in row] for row in sections["figures-shoe"]["rows"]]
    assert shoe[0][:3] == [("přečtené karty", None), ("1\u00a0234 karet", None), ("=\u00a01\u00a0234 karet", None)]
    assert shoe[1][:3] == [("čas do prvního přečtení (nejpomalejší)", None), ("nezměřeno", None),
                           ("vyžaduje senzor ústí boxu", None)]
    assert shoe[2][1:3] == [("87,5 %", None), ("≥\u00a050 %", None)]
    # What the floor's catalog does not hold (a newer box's figure, a word unit) stays the box's English.
    assert shoe[3][:3] == [("antenna temperature", "en"), ("31,5 kelvins", "en"), ("–", None)]


def test_the_tables_own_moment_is_in_the_readers_form_with_its_offset_and_zone_and_the_csv_keeps_it_raw():
    r = {**check_commissioning(event(record(1764680700.0, shoe_fails=True))), "table": "T01", "seq": 12,
         "filed": 1764680760.0}
    run = _czech_figures(r)["run"]["rows"]
    assert [c["text"] for c in run[1]] == ["podle zápisu hodin stolu",
                                           "út 2. 12. 2025 14:05:00 UTC+01:00 (Europe/Prague)"]
    english = C.record_sections(r, FloorClock("Europe/Prague"))[0]["rows"][1][1]["text"]
    assert english == "Tue 02 Dec 2025, 14:05:00 UTC+01:00 (Europe/Prague)"
    # A table whose clock wrote another offset than the floor's zone: its own offset, as it wrote it.
    other = {**r, "at_text": "2025-12-02T08:05:00-05:00", "zone": ""}
    assert _czech_figures(other)["run"]["rows"][1][1]["text"] == "út 2. 12. 2025 8:05:00 UTC-05:00 (zóna neuvedena)"
    # Machines read the record in stable forms, whatever the reader's language: English names, raw ISO.
    rows = list(csv.DictReader(io.StringIO(C.record_csv({**r, "devices": box_devices()}))))
    assert {row["run_end_local"] for row in rows} == {"2025-12-02T14:05:00+01:00"}
    assert [row["figure"] for row in rows] == ["ROUND DONE bounce", "FLOOR held", "red LED alone", "cards read",
                                               "time to first read (slowest)",
                                               "share of its pass's polls reading a card (worst)",
                                               "antenna temperature"]
    assert [row["bound"] for row in rows][:3] == ["<= 25 ms", ">= 2500 ms", "= 1 (yes)"]
    assert rows[4]["bound"] == "needs a mouth sensor" and rows[3]["unit"] == "cards"


def test_the_boxs_advice_is_read_in_czech_sentence_by_sentence_and_advice_naming_its_wiring_stays_english():
    cs = Language("cs", FloorClock("Europe/Prague"))
    known = " ".join((A.NOT_READ.format(cards="7h, Qs"), A.SLOW_FSYNC.format(ms="123.4"),
                      A.NO_ZONE_READER.format(zone="burn")))
    said = advice_text(cs, known)
    assert said == ("vůbec nepřečteno: 7h, Qs (vadný nebo chybějící štítek: vyměňte jej) jeden fsync trvá 123,4 ms: "
                    "pomalá nebo opotřebovaná SD karta (použijte kartu A1/A2) konfigurace nemá čtečku pro zónu burn",
                    True)
    # One sentence naming the table's own pins: the whole advice as the box wrote it (no half translation).
    wired = A.WEAK_TAGS.format(cards="7h") + " check pin 19 (BCM 10), 3.3 V"
    assert advice_text(cs, wired) == (wired, False)
    r = {**check_commissioning(event(record(1764680700.0, shoe_fails=True))), "table": "T01", "seq": 12,
         "filed": 1764680760.0}
    r["devices"][3]["advice"] = A.NO_MOUTH_SENSOR
    devices = {row[0]["text"]: row[3] for row in _czech_figures(r)["devices"]["rows"]}
    assert (devices["Senzor ústí boxu"]["text"], devices["Senzor ústí boxu"]["lang"]) == (
        "konfigurace nemá senzor ústí boxu ([mouth_sensor] je volitelný: firmware_config/tables/README.md)", None)
    assert devices["Čtečka shoe"]["lang"] == "en" and "replace those two cards" in devices["Čtečka shoe"]["text"]
    # The CSV keeps the box's own advice.
    assert {row["advice"] for row in csv.DictReader(io.StringIO(C.record_csv(r))) if row["device"] == "mouth"} == {
        A.NO_MOUTH_SENSOR}


def test_every_shared_name_bound_and_advice_has_the_floors_words():
    """The box's vocabulary and the floor's tables are one list: a name the box learns is worded here too."""
    assert set(W.FIGURE_WORDS) | {F.LED_ALONE} == set(F.FIGURE_NAMES)
    assert set(W.BOUND_WORDS) | {F.YES_BOUND} == set(F.FREE_BOUNDS)
    assert set(W.ADVICE_WORDS) == set(A.ADVICE)
    # Each advice sentence begins with its own words (the floor finds a sentence by its start).
    assert not [t for t in A.ADVICE if t.startswith("{")]
    # The floor's words fill the same facts as the shared template.
    for template, words in {**W.FIGURE_WORDS, **W.BOUND_WORDS, **W.ADVICE_WORDS}.items():
        assert set(re.findall(r"%\((\w+)\)s", words)) == set(re.findall(r"\{(\w+)\}", template)), template
