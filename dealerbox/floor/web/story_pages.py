"""A hand's story for people: the page's words around :func:`dealerbox.floor.telling.story.tell`,
and the story as PDF (``/hands/{table}/{seq}.pdf``, permission ``view``).

The page (``hand_page`` in app.py) and the PDF say the same things in the same words:
the heading (the table, its hand number, the date and time in the floor's zone),
the dealer, how the hand ended, and every time as local time with its zone.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from dealerbox.floor.telling import story as S
from dealerbox.floor.telling.story_pdf import FontMissing, story_pdf
from dealerbox.floor.web.auth import Refused

__all__ = ["StoryPages", "ENDED_BY"]

#: How a hand ended (the story's ``ended_by``), in the page's words.
ENDED_BY = {"hand_over": "HAND OVER pressed", "misdeal": "a misdeal", "void": "the hand declared void",
            "open": "not over yet (no HAND OVER so far)"}


class StoryPages:
    """The story's page data and its PDF. *figures*: the app's FiguresApi (its store and
    ledger); *clock*: the floor's FloorClock; *names*: the app's ``_names(session)``."""

    def __init__(self, figures, clock, names):
        self.figures, self.clock, self.names = figures, clock, names

    def routes(self) -> list[tuple]:
        """The routes, as :meth:`FloorApp.routes` lists them."""
        return [("/hands/{table_id}/{seq:int}.pdf", "GET", self.hand_pdf, "view", None)]

    def story(self, table_id: str, seq: int) -> tuple[dict, dict]:
        """The story of the hand holding *seq* (a 400 or 404 as FiguresApi.story gives them)
        and its place among the table's hands (:func:`~dealerbox.floor.telling.story.hand_place`)."""
        story = self.figures.story(table_id, seq)
        with self.figures.engine.connect() as conn:
            place = S.hand_place(conn, story["table"], story["start_seq"])
        return story, place

    def when(self, ts) -> str:
        """``12:00:55 CET``: a moment of the hand, its date being the heading's."""
        return self.clock.at(ts).strftime("%H:%M:%S %Z") if ts else "time not recorded"

    def words(self, request, story: dict, place: dict, names: dict) -> dict:
        """What the page and the PDF say around the story."""
        number = (f"hand {place['number']}" if place["number"] else
                  f"journal lines {story['start_seq']} to {story['end_seq']}, before its first hand on the floor")
        # Lines before a table's first hand have no hand to deal: their dealer events say who came.
        dealer = story["dealer"] or ("nobody signed in" if place["number"] else "no hand dealt yet")
        if story["dealer"] and names.get(story["dealer"]):
            dealer += f" ({names[story['dealer']]})"
        started = self.clock.full(story["started"]) if story["started"] else ""
        path = f"/hands/{story['table']}/{story['start_seq']}"
        return {"heading": f"Table {story['table']}, {number}" + (f", {started}" if started else ""),
                "place": place, "dealer_words": dealer,
                "ended_by": ENDED_BY.get(story["ended_by"], str(story["ended_by"]).replace("_", " ")),
                "permalink": str(request.base_url).rstrip("/") + path, "pdf": path + ".pdf",
                "when": self.when,
                "zone": self.clock.at(story["started"]).strftime("%Z") if story["started"] else "local"}

    async def hand_pdf(self, request, client, session):
        p = request.path_params
        story, place = await run_in_threadpool(self.story, p["table_id"], p["seq"])
        words = self.words(request, story, place, await self.names(session))
        try:
            body = await run_in_threadpool(story_pdf, story, heading=words["heading"], when=self.when,
                                           dealer=words["dealer_words"], ended_by=words["ended_by"],
                                           permalink=words["permalink"])
        except FontMissing as exc:
            raise Refused(503, str(exc)) from None
        name = f"hand-{story['table']}-{story['start_seq']}.pdf"
        return Response(body, media_type="application/pdf",
                        headers={"Content-Disposition": f'inline; filename="{name}"'})
