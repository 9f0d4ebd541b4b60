"""Game protection's alerts in the reader's words: what each alert is, how unlikely what it saw
was, why it fired (its evidence), and the short line the floor map's headline gives it.

The protection pass files each alert with its facts (:mod:`~dealerbox.floor.protect.evidence`:
the kept pairs, the strong hands, the error hands) and an English text for the technician
(:mod:`dealerbox.floor.alert_texts`). The Surveillance page, its PDF and its JSON tell the
facts here, in the reader's :class:`~.language.Language`; the floor map, which has only the
alert's text, tells the facts read back from it (:meth:`ProtectWords.headline`). English keeps
the words and the number forms the page had before (``1,008.0``, ``4.8%``); the other
languages write numbers in their own forms (``1 008,0``, ``4,8 %``).
"""

from __future__ import annotations

import re

from dealerbox.floor import alert_texts as T
from dealerbox.floor.telling.games import GAMES_WORDS
from dealerbox.floor.telling.protect_terms import BASIS_WORDS, MOST_HANDS, few_digits, story
from dealerbox.floor.telling.language import Language
from dealerbox.floor.marks import N_

__all__ = ["ProtectWords", "ALERT_TITLES", "STATUS_WORDS"]

#: What each protection alert is, in a pit boss's words.
ALERT_TITLES = {
    "shuffle": N_("A deck dealt as if not shuffled"),
    "procedure": N_("A dealer shuffling less than the house declares"),
    "seat_luck": N_("A seat dealt improbably many strong starting hands"),
    "dealer_chart": N_("A dealer's error rate out of line with the room's"),
    "protect_reference": N_("A game whose hands are not checked for a shuffle"),
}
#: A game's reference status in words.
STATUS_WORDS = {"current": N_("fitted from the declared model"), "stale": N_("fitted from another model: not used"),
                "missing": N_("none yet")}
#: Where a kept pair lay after the earlier hand, as the evidence says it (``seat 3``).
_WHERE = {"the board": N_("the board"), "the burns": N_("the burns")}
#: A declared shuffle's steps (``[protect] shuffle``, :data:`~dealerbox.floor.protect.shuffles.STEPS`)
#: as the card room names them: riffle, strip and cut keep their English names, as the rooms say them.
_STEP_WORDS = {"machine": N_("shuffling machine"), "riffle": N_("riffle"), "strip": N_("strip"), "cut": N_("cut")}
#: Why a game's hands go unchecked, as a ``protect_reference`` alert's text says it.
_REFERENCE_WHY = {w: w for w in (N_("no reference for the declared model"),
                                 N_("the reference was fitted from another model"))}
_SEAT = re.compile(r"^seat (\d+)$")
_FOLLOWED = re.compile(r"^the seat dealt (\d+)\w* at hand (\d+), followed round as the button moved$")


def _two_figures(x: float) -> int:
    """*x* rounded to two significant figures (odds read better as 52,000 than 51,873)."""
    digits = len(str(int(x))) - 2
    return int(round(x, -digits)) if digits > 0 else round(x)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def upper_first(text: str) -> str:
    """*text* with its first letter a capital."""
    return text[:1].upper() + text[1:]


def _float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


class ProtectWords:
    """Protection's words in *language*."""

    def __init__(self, language: Language):
        self.language = language
        self.english = language.code == "en"
        self._ = language.gettext
        self.ngettext = language.ngettext

    # -- numbers, as the page had them in English, in the language's forms otherwise

    def decimal(self, x: float | None, digits: int = 1) -> str:
        """``12.5`` (en, no grouping) or ``12,5`` (cs); empty for none."""
        if x is None:
            return ""
        return f"{x:.{digits}f}" if self.english else self.language.forms.decimal(x, digits)

    def integer(self, n: float | None) -> str:
        """``100,800`` (en) or ``100 800`` (cs); empty for none."""
        return "" if n is None else self.language.forms.integer(round(n))

    def percent(self, share: float | None) -> str:
        """``4.8%`` (en) or ``4,8 %`` (cs); empty for none."""
        if share is None:
            return ""
        return f"{100 * share:.1f}%" if self.english else self.language.forms.percent(share, 1)

    def general(self, x: float) -> str:
        """A configured figure as written (``%g``): ``0.0001``, ``1``; ``0,0001`` in cs."""
        text = f"{x:g}"
        if self.english or "e" in text:
            return text
        digits = len(text.partition(".")[2])
        return self.language.forms.decimal(x, digits)

    def few(self, x: float) -> str:
        """An expected count, small ones in two figures (:func:`~dealerbox.floor.protect.budget.few`)."""
        return "0" if x <= 0 else self.decimal(x, few_digits(x))

    def odds(self, p: float | None, resolution: float | None = None, *, short: bool = False) -> str:
        """A probability as a pit boss reads it: ``about 1 in 52,000``, ``4.8%``; at the
        reference's resolution, ``fewer than 1 in 100,001 (the most the reference can tell)``
        (a Monte Carlo p-value cannot go lower; *short*: without the bracket)."""
        _ = self._
        if p is None:
            return ""
        if resolution is not None and p <= resolution * (1 + 1e-9):
            n = self.integer(round(1 / resolution))
            return (_("fewer than 1 in %(n)s") if short else
                    _("fewer than 1 in %(n)s (the most the reference can tell)")) % {"n": n}
        if p <= 0:
            return _("never, under the declared model")
        if p < 1e-9:
            return _("less than 1 in a billion")
        if p < 0.01:
            return _("about 1 in %(n)s") % {"n": self.integer(_two_figures(1 / p))}
        return self.percent(p)

    # -- the things alerts name

    def title(self, kind: str) -> str:
        """What an alert of *kind* is: ``A deck dealt as if not shuffled``."""
        return self._(ALERT_TITLES[kind]) if kind in ALERT_TITLES else kind

    def status(self, state: str) -> str:
        """A game's reference status: ``none yet``."""
        return self._(STATUS_WORDS[state]) if state in STATUS_WORDS else state

    def game(self, players: int, hole_cards: int) -> str:
        """``hold'em at 7 players`` (:func:`~dealerbox.floor.protect.config.game_words`)."""
        name = (self._(GAMES_WORDS[hole_cards]) if hole_cards in GAMES_WORDS
                else self.ngettext("%(n)s hole card", "%(n)s hole cards", hole_cards) % {"n": hole_cards})
        return self.ngettext("%(game)s at %(players)s player", "%(game)s at %(players)s players", players) % {
            "game": name, "players": players}

    def shuffle(self, declared: str | None) -> str:
        """A declared shuffle (``riffle riffle strip riffle cut``, ``machine``) in this language;
        a model of another form (a stored reference's, with its gathering) as it was written."""
        steps = (declared or "").split()
        if not steps or any(step not in _STEP_WORDS for step in steps):
            return declared or ""
        return ", ".join(self._(_STEP_WORDS[step]) for step in steps)

    def seat(self, seat: str) -> str:
        """A seat as the evidence names it (``seat 3``, or a seat followed from the deal)."""
        m = _SEAT.match(seat)
        if m:
            return self._("seat %(seat)s") % {"seat": m.group(1)}
        m = _FOLLOWED.match(seat)
        if m:
            position = int(m.group(1))
            return self._("the seat dealt %(position)s at hand %(hand)s, followed round as the button moved") % {
                "position": _ordinal(position) if self.english else f"{position}.", "hand": m.group(2)}
        return seat

    def where(self, was: str | None) -> str:
        """Where a kept pair lay after the earlier hand: ``seat 3``, ``the board``, ``apart``."""
        if not was:
            return self._("apart")
        if was in _WHERE:
            return self._(_WHERE[was])
        return self.seat(was)

    def places(self, places) -> str:
        if not places or None in places:
            return self._("not known")
        return self._("%(first)s and %(second)s") % {"first": places[0], "second": places[1]}

    def hand_link(self, table: str, seq) -> dict:
        return {"text": self._("table %(table)s, line %(seq)s") % {"table": table, "seq": seq},
                "href": story(table, seq)}

    def _hands(self, table: str, rows) -> list[dict]:
        """Links to hands given as seqs (of *table*) or (table, seq) pairs, the last MOST_HANDS."""
        out = []
        for row in list(rows)[-MOST_HANDS:]:
            t, seq = (row[0], row[1]) if isinstance(row, (list, tuple)) else (table, row)
            out.append(self.hand_link(t, seq))
        return out

    # -- why an alert fired

    def why(self, kind: str, table: str, evidence: dict | None) -> dict:
        """*evidence* in words (:func:`~dealerbox.floor.protect.evidence.evidence_lines`, in this
        language): ``summary``, ``links`` (``text``, ``href``) and for a shuffle alert ``pairs``."""
        _, ngettext = self._, self.ngettext
        out = {"summary": "", "links": [], "pairs": []}
        if not isinstance(evidence, dict):
            return out
        e = evidence
        if kind == "shuffle":
            pairs = e.get("pairs") or []
            earlier = e.get("earlier")
            facts = {"n": len(pairs), "seq": earlier}
            out["summary"] = (ngettext("%(n)s pair of cards lay side by side in this hand's draw as the deck's earlier "
                                 "hand (line %(seq)s) left it.",
                                 "%(n)s pairs of cards lay side by side in this hand's draw as the deck's earlier "
                                 "hand (line %(seq)s) left them.", len(pairs))
                              if earlier is not None else
                              ngettext("%(n)s pair of cards lay side by side in this hand's draw as the deck's earlier "
                                 "hand left it.",
                                 "%(n)s pairs of cards lay side by side in this hand's draw as the deck's earlier "
                                 "hand left them.", len(pairs))) % facts
            out["pairs"] = [{"cards": " ".join(p.get("cards") or []), "here": self.places(p.get("here")),
                             "there": self.places(p.get("there")), "was": self.where(p.get("was"))} for p in pairs]
            out["links"] = [{"text": _("this hand's story (table %(table)s, line %(seq)s)") % {
                "table": table, "seq": e.get("hand")}, "href": story(table, e.get("hand"))}]
            if earlier is not None:
                out["links"].append({"text": _("the earlier hand's story (table %(table)s, line %(seq)s)") % {
                    "table": table, "seq": earlier}, "href": story(table, earlier)})
        elif kind == "procedure":
            hands = e.get("hands") or []
            dealer = e.get("dealer") or _("nobody signed in")
            out["summary"] = ngettext("Dealer %(dealer)s's block of %(n)s hands kept %(pairs)s pair in all; each hand "
                                "below opens its story.",
                                "Dealer %(dealer)s's block of %(n)s hands kept %(pairs)s pairs in all; each hand "
                                "below opens its story.", _count(e.get("statistic"))) % {
                "dealer": dealer, "n": len(hands), "pairs": e.get("statistic")}
            out["links"] = self._hands(table, hands)
        elif kind == "seat_luck":
            strong = e.get("strong_hands") or []
            seat = upper_first(self.seat(str(e.get("seat"))))
            facts = {"seat": seat, "n": len(strong), "hands": e.get("hands"),
                     "expected": self.decimal(float(e.get("expected") or 0)), "window": e.get("window")}
            out["summary"] = (_("%(seat)s was dealt %(n)s strong starting hands in %(hands)s hands (%(window)s), "
                                "where chance gives about %(expected)s.") if e.get("window") else
                              _("%(seat)s was dealt %(n)s strong starting hands in %(hands)s hands since its chart "
                                "last stood at 0, where chance gives about %(expected)s.")) % facts
            out["links"] = self._hands(table, strong)
        elif kind == "dealer_chart":
            errors = e.get("error_hands") or []
            out["summary"] = ngettext("Dealer %(dealer)s's chart reached %(value)s (limit %(h)s) after %(n)s hand with an "
                                "error since it last stood at 0.",
                                "Dealer %(dealer)s's chart reached %(value)s (limit %(h)s) after %(n)s hands with "
                                "an error since it last stood at 0.", len(errors)) % {
                "dealer": e.get("dealer"), "value": self.decimal(float(e.get("value") or 0)),
                "h": self.decimal(float(e.get("h") or 0)), "n": len(errors)}
            out["links"] = self._hands(table, errors)
        elif kind == "protect_reference":
            out["summary"] = self._reference_summary(e)
            if e.get("hand") is not None:
                out["links"] = [{"text": _("the first hand not checked (table %(table)s, line %(seq)s)") % {
                    "table": table, "seq": e["hand"]}, "href": story(table, e["hand"])}]
        return out

    def _reference_summary(self, e: dict) -> str:
        _ = self._
        game = e.get("game") or [None, None]
        words = self.game(*game) if None not in game and len(game) == 2 else _("a game")
        found = e.get("found_model") or e.get("found") or _("a model nobody recorded")
        why = (_("no reference has been fitted for it under the declared model") if e.get("reason") == "missing"
               else _("its reference was fitted from another model (%(model)s)") % {"model": found})
        declared = self.shuffle(e.get("declared_model")) or e.get("expected")
        return " ".join([
            _("Hands of %(game)s are not checked for a shuffle: %(why)s.") % {"game": words, "why": why},
            _("The declared model is %(model)s.") % {"model": declared},
            self.next_step(e.get("next")) if e.get("next") else
            _("It is being fitted in the background; hands are checked once it is stored.") if e.get("fitting")
            else _("Run dealerbox floor protect fit.")])

    def next_step(self, next_: str) -> str:
        """What the pass said is due and to do (its English, :meth:`Protection._reference_alert`)
        as a sentence in this language; a form it does not know, as it was said."""
        _ = self._
        if next_.startswith("nothing fits it in the background"):
            return _("Nothing fits it in the background ([protect] auto_fit is off): run dealerbox floor "
                     "protect fit.")
        m = re.match(r"^fitting it in the background failed \((?P<why>.*)\): run dealerbox floor protect fit$",
                     next_, re.S)
        if m:
            return _("Fitting it in the background failed (%(why)s): run dealerbox floor protect fit.") % m.groupdict()
        m = re.match(r"^still not stored (?P<waited>[0-9.]+) minutes after the first hand left unchecked "
                     r"\(\[protect\] reference_wait_minutes = (?P<bound>[0-9.e+-]+)\); see the Surveillance page$",
                     next_)
        if m:
            return _("Still not stored %(waited)s minutes after the first hand left unchecked ([protect] "
                     "reference_wait_minutes = %(bound)s); see the Surveillance page.") % {
                "waited": self.decimal(float(m.group("waited"))), "bound": m.group("bound")}
        return upper_first(next_) + "."

    # -- the floor map's line

    def headline(self, kind: str, text: str | None) -> str | None:
        """The short line an alert's headline gives a protection alert, told from the facts of
        its stored *text* (:mod:`dealerbox.floor.alert_texts`); None for a text of another form."""
        _, ngettext = self._, self.ngettext
        message, f = T.read_text(kind, text)
        if message is None:
            return None
        if message is T.SHUFFLE:
            pairs = _count(f["pairs"])
            return ngettext("deck %(deck)s, hand at line %(seq)s: %(pairs)s pair kept from the deck's last hands, "
                      "%(odds)s under the declared shuffle",
                      "deck %(deck)s, hand at line %(seq)s: %(pairs)s pairs kept from the deck's last hands, "
                      "%(odds)s under the declared shuffle", pairs) % {
                "deck": f["deck"], "seq": f["seq"], "pairs": f["pairs"],
                "odds": self.odds(_float(f["p"]), _float(f["resolution"]), short=True)}
        if message is T.PROCEDURE:
            who = _("no dealer signed in") if f["dealer"] == "none" else _("dealer %(dealer)s") % {"dealer": f["dealer"]}
            return ngettext("%(who)s, %(hands)s hand to line %(seq)s: shuffling weaker than declared, "
                            "%(odds)s under the declared shuffle",
                            "%(who)s, %(hands)s hands to line %(seq)s: shuffling weaker than declared, "
                            "%(odds)s under the declared shuffle", _count(f["hands"])) % {
                "who": who, "hands": f["hands"], "seq": f["seq"], "odds": self.odds(_float(f["p"]))}
        if message is T.SEAT_LUCK:
            expected = _float(f["expected"])
            return ngettext("%(seat)s: %(strong)s strong starting hand in %(hands)s hands, where chance gives about "
                            "%(expected)s",
                            "%(seat)s: %(strong)s strong starting hands in %(hands)s hands, where chance gives about "
                            "%(expected)s", _count(f["strong"])) % {
                "seat": self.seat(f["seat"]), "strong": f["strong"], "hands": f["hands"],
                "expected": self.decimal(expected) if expected is not None else f["expected"]}
        if message is T.DEALER_CHART:
            return _("dealer %(dealer)s out of control at the hand at line %(seq)s") % {
                "dealer": f["dealer"], "seq": f["seq"]}
        if message is T.REFERENCE:
            why = _REFERENCE_WHY.get(f["why"])
            return _("hands of %(game)s are not checked for a shuffle: %(why)s") % {
                "game": self._game_of(f["game"]), "why": _(why) if why else f["why"]}
        return None

    def _game_of(self, words: str) -> str:
        m = re.match(r"^(?P<game>.+) at (?P<players>\d+) players$", words)
        if m:
            hole = {name: cards for cards, name in GAMES_WORDS.items()}.get(m.group("game"))
            if hole is not None:
                return self.game(int(m.group("players")), hole)
        return words

    # -- the alarm budget

    def basis(self, row: dict) -> str:
        """What a budget row's figure is worked out from (its ``facts``), in this language."""
        facts = row.get("facts")
        if not isinstance(facts, dict) or row.get("check") not in BASIS_WORDS:
            return row.get("basis", "")
        return self._(BASIS_WORDS[row["check"]]) % {
            name: self.integer(value) if name == "arl" else self.general(value) for name, value in facts.items()}


def _count(value) -> int:
    """A count as a plural's *n* (a fact read back from a text is a string)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


