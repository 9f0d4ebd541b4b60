"""A hand's story as a PDF (fpdf2, pure Python): what surveillance files after a dispute.

It tells what the page tells (dealerbox/floor/templates/story.html), from the same
story (:func:`dealerbox.floor.telling.story.tell`), in the same words (the reader's language:
whoever asked for the PDF) and the same card notation (``T♦``): the
heading, the facts, each seat's hole cards, the board street by street, one entry
per irregularity with each step and when it was seen done, the shoe order and
every line the table recorded.

The suit symbols need a font that has them: DejaVu Sans, from Debian's
``fonts-dejavu-core`` (:data:`FONT_DIRS`). Without it :func:`story_pdf` raises
:class:`FontMissing`, which the web view answers with a 503 naming the package.
"""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from dealerbox.errors import FloorError
from dealerbox.floor.telling.catalogs import N_, SOURCE_LANGUAGE, translations
from dealerbox.floor.telling.story import VERDICT_WORDS

__all__ = ["story_pdf", "find_font", "FontMissing", "NO_FONT", "FONT_DIRS", "FONT_FILES"]

#: Where Debian's fonts-dejavu-core puts DejaVu Sans.
FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"),)
#: The regular and bold faces.
FONT_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")
_FAMILY = "DejaVu"
_NEXT = {"new_x": XPos.LMARGIN, "new_y": YPos.NEXT}


#: Why no PDF can be made without the font: :class:`FontMissing`'s text, a catalog message
#: (a page that cannot give its PDF says it in its reader's language).
NO_FONT = N_("the floor's PDFs need DejaVu Sans for the suit symbols: install Debian's fonts-dejavu-core "
             "(looked in %(dirs)s)")


class FontMissing(FloorError):
    """No font with the suit symbols is installed: the PDF cannot show the cards. *dirs*:
    where it was looked for, as :data:`NO_FONT` names them."""

    def __init__(self, dirs: str):
        self.dirs = dirs
        super().__init__(NO_FONT % {"dirs": dirs})


def find_font(dirs=FONT_DIRS) -> tuple[Path, Path]:
    """The regular and bold DejaVu Sans files, else :class:`FontMissing` naming the package."""
    for directory in dirs:
        regular, bold = (Path(directory) / name for name in FONT_FILES)
        if regular.is_file() and bold.is_file():
            return regular, bold
    raise FontMissing(", ".join(str(d) for d in dirs))


class _Doc(FPDF):
    def __init__(self, footer: str, fonts: tuple[Path, Path], page_words: str):
        super().__init__(orientation="P", unit="mm", format="A4")
        self.footer_text = footer
        self.page_words = page_words
        self.add_font(_FAMILY, "", str(fonts[0]))
        self.add_font(_FAMILY, "B", str(fonts[1]))
        self.set_auto_page_break(True, margin=15)
        self.set_title(footer)
        self.set_creator("dealerbox floor")

    def footer(self):
        self.set_y(-12)
        self.set_font(_FAMILY, "", 8)
        self.cell(0, 5, self.page_words % {"footer": self.footer_text, "page": self.page_no(), "pages": "{nb}"},
                  align="C")

    def heading(self, text: str, size: int = 12) -> None:
        self.ln(2)
        self.set_font(_FAMILY, "B", size)
        self.multi_cell(0, size * 0.5, text, **_NEXT)
        self.set_font(_FAMILY, "", 10)

    def para(self, text: str, size: int = 10) -> None:
        self.set_font(_FAMILY, "", size)
        self.multi_cell(0, 5, text, **_NEXT)

    def row(self, label: str, text: str) -> None:
        self.set_font(_FAMILY, "B", 10)
        # A label longer than its column (German's) wraps within it, never over the text.
        top = self.get_y()
        self.multi_cell(42, 5.5, label, new_x=XPos.RIGHT, new_y=YPos.TOP)
        label_bottom = top + 5.5 * len(self.multi_cell(42, 5.5, label, dry_run=True, output="LINES"))
        self.set_font(_FAMILY, "", 10)
        self.multi_cell(0, 5.5, text, **_NEXT)
        self.set_y(max(self.get_y(), label_bottom))


def story_pdf(story: dict, *, heading: str, when, dealer: str, ended_by: str, permalink: str,
              fonts: tuple[Path, Path] | None = None, language=None) -> bytes:
    """The story as PDF bytes. *heading* is the page's title, *when* turns an epoch second
    into the floor's local time with its zone, *dealer* and *ended_by* are the page's
    words for them, *permalink* the page's own address; *language* (a
    :class:`~dealerbox.floor.telling.language.Language`) words the rest as the page does
    (without one: English, as written)."""
    # Without a reader's language: the messages as written (the source language's catalog).
    told = language if language is not None else translations(SOURCE_LANGUAGE)
    _, ngettext = told.gettext, told.ngettext
    messages = language.messages if language is not None else None

    def cards(listed: list[dict]) -> str:
        return " ".join("[" + _("unread") + "]" if c["unread"] else c["text"] for c in listed) or _("none")

    def verdicts(listed: list[str]) -> str:
        return _(", then ").join(_(VERDICT_WORDS[v]) if v in VERDICT_WORDS else v.upper() for v in listed)

    doc = _Doc(heading, fonts or find_font(), _("%(footer)s, page %(page)s/%(pages)s"))
    doc.add_page()
    doc.heading(heading, 15)
    doc.para(permalink, 9)
    doc.ln(2)
    doc.row(_("Dealer"), dealer)
    hole = ngettext("%(count)s hole card each", "%(count)s hole cards each", story["hole_cards"]) % {
        "count": story["hole_cards"]}
    players = story["players"] if story["players"] is not None else _("not recorded")
    doc.row(_("Players"), f"{players} ({hole})")
    doc.row(_("Started"), when(story["started"]))
    doc.row(_("Last line"), when(story["ended"]))
    doc.row(_("Ended by"), ended_by)
    doc.row(_("Journal lines"), _("%(first)s to %(last)s") % {"first": story["start_seq"], "last": story["end_seq"]})

    doc.heading(_("Seats"))
    for seat in story["seats"]:
        doc.row(_("seat %(number)s") % {"number": seat["number"]}, cards(seat["cards"]))
    if story["extra_deal"]:
        doc.row(_("drawn beyond the deal"), cards(story["extra_deal"]))

    doc.heading(_("The board as laid"))
    for street in story["streets"]:
        text = _("burned %(burned)s; laid %(laid)s") % {"burned": cards(street["burns"]), "laid": cards(street["cards"])}
        if street["taken_off"]:
            text = _("%(street)s; taken off the board %(cards)s") % {"street": text, "cards": cards(street["taken_off"])}
        doc.row(_(street["street"]), text)
    doc.row(_("Board"), cards(story["board_cards"]) if story["board_cards"] else _("No card was laid on the board."))

    doc.heading(_("Irregularities"))
    if not story["irregularities"]:
        doc.para(_("No irregularity: the box decided nothing in this hand beyond play on."))
    for n, e in enumerate(story["irregularities"], 1):
        doc.set_font(_FAMILY, "B", 10)
        title = f"{n}. {e['irregularity']}: {verdicts(e['verdicts'])}"
        if messages is not None:
            name = messages.irregularity_name(e["irregularity"], e["verdict"])
            title = f"{n}. {name[:1].upper()}{name[1:]} ({e['irregularity']}: {verdicts(e['verdicts'])})"
        doc.multi_cell(0, 5.5, title, **_NEXT)
        phase = (messages.phase_name(e["phase"]) if messages is not None else e["phase"]) if e["phase"] else \
            _("phase not recorded")
        meta = _("Seen %(when)s (line %(line)s)") % {"when": when(e["wall"]), "line": e["seq"]} + f", {phase}"
        if e["cards"]:
            meta += "; " + _("cards %(cards)s") % {"cards": " ".join(e["cards"])}
        if e["rule"]:
            meta += "; " + _("rule %(rule)s") % {"rule": e["rule"]}
        doc.para(meta, 9)
        for k, step in enumerate(e["steps"], 1):
            if step["done"] is None:
                seen = _("No correction asked: the box said play on.")
            elif not step["done"]:
                seen = _("Not seen done.").upper()
            elif step.get("by"):
                seen = _("Seen done %(when)s, on %(what)s (line %(line)s).") % {
                    "when": when(step["wall"]), "what": step["by"], "line": step["cause"]}
            else:
                seen = _("Seen done %(when)s (line %(line)s).") % {"when": when(step["wall"]), "line": step["seq"]}
            doc.set_x(doc.l_margin + 5)
            doc.multi_cell(0, 5, f"{k}. {step['text']} {seen}", **_NEXT)
        if e["record"]:
            doc.para(_("At HAND OVER, %(when)s (line %(line)s): %(text)s") % {
                "when": when(e["record"]["wall"]), "line": e["record"]["seq"], "text": e["record"]["text"]}, 9)
        doc.ln(1)
    if story["after_hand"]:
        doc.heading(_("Recorded after HAND OVER"))
        for e in story["after_hand"]:
            at = _("%(when)s, line %(line)s") % {"when": when(e["wall"]), "line": e["seq"]}
            listed = ", " + _("cards %(cards)s") % {"cards": " ".join(e["cards"])} if e["cards"] else ""
            doc.para(f"{e['irregularity']} ({at}){listed}: " + " ".join(s["text"] for s in e["steps"]))

    doc.heading(_("Cards in the order they left the shoe"))
    doc.para(cards(story["shoe"]))

    doc.heading(_("Everything the table recorded"))
    doc.set_font(_FAMILY, "", 8)
    for e in story["timeline"]:
        doc.multi_cell(0, 4, f"{e['seq']:>8}  {when(e['wall'])}  {e['what']}", **_NEXT)
    return bytes(doc.output())
