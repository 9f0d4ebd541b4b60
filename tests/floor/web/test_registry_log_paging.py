"""A day's card control log is a page of its hands (issue 47: the page of a room's 33,000 hands
of a day took 11 to 15 s): :data:`HANDS_SHOWN` hands a page, oldest first, with links to the
earlier and later pages; the decks in play per table summed over the whole day; the heading
and a note saying how many hands the day holds and which the page shows; the CSV every hand.
A ``hand`` that is not a hand's number in the day is refused with a clear 400."""

from __future__ import annotations

import csv
import datetime
import io
import re

import pytest
from sqlalchemy import insert

from dealerbox.floor.store import Store
from dealerbox.floor.store.schema import reg_hands_table
from dealerbox.floor.web.registry_pages import HANDS_SHOWN
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in

DAY = datetime.date(2026, 11, 18)
#: Noon of DAY in UTC: every hand below lies within DAY in any zone the floor may keep.
NOON = datetime.datetime(2026, 11, 18, 12, tzinfo=datetime.timezone.utc).timestamp()
HANDS = 2 * HANDS_SHOWN + 37


def the_days_hands() -> list[dict]:
    """Three tables dealing with two decks each, a hand every 30 s at each, in the test's own rows;
    two hands of the day before, which the day's log leaves out."""
    hands = []
    for n in range(HANDS):
        table = f"T0{n % 3 + 1}"
        started = NOON - 4 * 3600 + 10 * n
        hands.append({"table_id": table, "start_seq": 1000 + n, "deck": f"Deck {n % 3}-{'AB'[n > HANDS // 2]}",
                      "started": started, "ended": started + 25 if n % 7 else None, "dealer": f"E{n % 5}"})
    hands += [{"table_id": "T01", "start_seq": s, "deck": "Deck 0-A", "started": NOON - 86_400 - s, "ended": None,
               "dealer": None} for s in (1, 2)]
    return hands


@pytest.fixture
def served(tmp_path):
    path = tmp_path / "floor.sqlite"
    add_users(path)
    hands = the_days_hands()
    with Store(path) as store, store.engine.begin() as conn:
        conn.execute(insert(reg_hands_table), hands)
    with WebProcess(tmp_path, path) as web:
        yield web, [h for h in hands if h["started"] >= NOON - 86_400 + 3600]


def hand_rows(body: str) -> list[str]:
    """The hands' links (``/hands/T01/1000``) of the page's hands table, in order."""
    table = body.split('id="log-hands"')[1].split("</table>")[0]
    return re.findall(r'href="(/hands/[^"]+)"', table)


def test_a_days_log_shows_a_page_of_its_hands_with_links_to_the_others(served):
    web, hands = served
    cookie = sign_in(web, "vera")[0]
    ordered = [f"/hands/{h['table_id']}/{h['start_seq']}" for h in sorted(
        hands, key=lambda h: (h["started"], h["table_id"], h["start_seq"]))]
    status, _h, body = call(web, "GET", f"/registry/log?day={DAY}", cookie=cookie)
    assert status == 200
    assert f"Hands dealt ({HANDS:,})" in body
    assert hand_rows(body) == ordered[:HANDS_SHOWN]
    assert f"Hands 1 to {HANDS_SHOWN} of {HANDS:,}, oldest first" in body
    assert f'href="/registry/log?day={DAY}&amp;hand={HANDS_SHOWN + 1}#log-hands-heading">Later hands' in body
    assert "Earlier hands" not in body
    # The decks in play per table: summed over the whole day, not over the page.
    where = body.split('id="log-tables"')[1].split("</table>")[0]
    per = {}
    for h in hands:
        per[(h["deck"], h["table_id"])] = per.get((h["deck"], h["table_id"]), 0) + 1
    rows = re.findall(r"<tr><th scope=\"row\"><a [^>]*>([^<]+)</a></th><td><a [^>]*>([^<]+)</a></td>"
                      r"<td>[^<]*</td><td>[^<]*</td><td>(\d+)</td></tr>", where)
    assert {(deck, table): int(n) for deck, table, n in rows} == per and len(rows) == len(per)

    status, _h, last = call(web, "GET", f"/registry/log?day={DAY}&hand={2 * HANDS_SHOWN + 1}", cookie=cookie)
    assert status == 200 and hand_rows(last) == ordered[2 * HANDS_SHOWN:]
    assert f"Hands {2 * HANDS_SHOWN + 1:,} to {HANDS:,} of {HANDS:,}" in last
    assert f'href="/registry/log?day={DAY}&amp;hand={HANDS_SHOWN + 1}#log-hands-heading">Earlier hands' in last
    assert "Later hands" not in last
    status, _h, past = call(web, "GET", f"/registry/log?day={DAY}&hand={HANDS + 5}", cookie=cookie)
    assert status == 200 and hand_rows(past) == [] and f"No hand from hand {HANDS + 5:,}" in past

    # The CSV holds every hand of the day.
    status, _h, text = call(web, "GET", f"/registry/log.csv?day={DAY}", cookie=cookie)
    assert status == 200
    linked = [row["link"].split("/", 3)[-1] for row in csv.DictReader(io.StringIO(text)) if row["kind"] == "hand"]
    assert ["/" + link for link in linked] == ordered


@pytest.mark.parametrize("hand", ["0", "-3", "abc", "1.5", "%D9%A3", "99999999999"])
def test_a_hand_that_is_not_a_hands_number_is_refused_in_words(served, hand):
    web, _hands = served
    cookie = sign_in(web, "vera")[0]
    status, _h, body = call(web, "GET", f"/registry/log?day={DAY}&hand={hand}", cookie=cookie)
    assert status == 400 and "expected a hand's number in the day" in str(body), body
