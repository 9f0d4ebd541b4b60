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
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.moment_words import time_with_zone, zone
from dealerbox.floor.telling.story_pdf import NO_FONT, FontMissing, story_pdf
from dealerbox.floor.web.auth import Refused

__all__ = ["StoryPages", "ENDED_BY"]

#: How a hand ended (the story's ``ended_by``), in the page's words.
ENDED_BY = {"hand_over": N_("HAND OVER pressed"), "misdeal": N_("a misdeal"),
            "void": N_("the hand declared void"), "open": N_("not over yet (no HAND OVER so far)")}


class StoryPages:
    """The story's page data and its PDF. *figures*: the app's FiguresApi (its store and
    ledger); *languages*: the app's LanguageChoice (who reads which language); *names*: the
    app's ``_names(session)``."""

    def __init__(self, figures, languages, names):
        self.figures, self.languages, self.names = figures, languages, names

    def routes(self) -> list[tuple]:
        """The routes, as :meth:`FloorApp.routes` lists them."""
        return [("/hands/{table_id}/{seq:int}.pdf", "GET", self.hand_pdf, "view", None)]

    def story(self, table_id: str, seq: int, language: Language | None = None) -> tuple[dict, dict]:
        """The story of the hand holding *seq* (a 400 or 404 as FiguresApi.story gives them),
        told in *language*, and its place among the table's hands
        (:func:`~dealerbox.floor.telling.story.hand_place`)."""
        story = self.figures.story(table_id, seq, language)
        with self.figures.engine.connect() as conn:
            place = S.hand_place(conn, story["table"], story["start_seq"])
        return story, place

    @staticmethod
    def when(language: Language):
        """``12:00:55 SEČ``: a moment of the hand in *language*, its date being the heading's."""
        return lambda ts: time_with_zone(language, ts) if ts else language.gettext("time not recorded")

    def words(self, request, story: dict, place: dict, names: dict, language: Language) -> dict:
        """What the page and the PDF say around the story, in *language*."""
        _ = language.gettext
        number = (_("hand %(number)s") % {"number": place["number"]} if place["number"] else
                  _("journal lines %(first)s to %(last)s, before its first hand on the floor")
                  % {"first": story["start_seq"], "last": story["end_seq"]})
        # Lines before a table's first hand have no hand to deal: their dealer events say who came.
        dealer = story["dealer"] or (_("nobody signed in") if place["number"] else _("no hand dealt yet"))
        if story["dealer"] and names.get(story["dealer"]):
            dealer += f" ({names[story['dealer']]})"
        started = language.forms.full(story["started"]) if story["started"] else ""
        path = f"/hands/{story['table']}/{story['start_seq']}"
        heading = (_("Table %(table)s, %(hand)s, %(started)s") % {"table": story["table"], "hand": number,
                                                                   "started": started} if started else
                   _("Table %(table)s, %(hand)s") % {"table": story["table"], "hand": number})
        ended = story["ended_by"]
        return {"heading": heading, "place": place, "dealer_words": dealer,
                "ended_by": _(ENDED_BY[ended]) if ended in ENDED_BY else str(ended).replace("_", " "),
                "permalink": str(request.base_url).rstrip("/") + path, "pdf": path + ".pdf",
                "when": self.when(language), "verdict_words": S.VERDICT_WORDS,
                "zone": zone(language, story["started"]) if story["started"] else _("local")}

    async def hand_pdf(self, request, client, session):
        p = request.path_params
        # In the language of whoever asks for it, as their pages are.
        language = self.languages.of(request, session)
        story, place = await run_in_threadpool(self.story, p["table_id"], p["seq"], language)
        words = self.words(request, story, place, await self.names(session), language)
        try:
            body = await run_in_threadpool(story_pdf, story, heading=words["heading"], when=words["when"],
                                           dealer=words["dealer_words"], ended_by=words["ended_by"],
                                           permalink=words["permalink"], language=language)
        except FontMissing as exc:
            raise Refused(503, NO_FONT, dirs=exc.dirs) from None
        name = f"hand-{story['table']}-{story['start_seq']}.pdf"
        return Response(body, media_type="application/pdf",
                        headers={"Content-Disposition": f'inline; filename="{name}"'})
