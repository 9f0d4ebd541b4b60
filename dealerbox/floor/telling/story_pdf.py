"""A hand's story as a PDF (fpdf2, pure Python): what surveillance files after a dispute.

It tells what the page tells (dealerbox/floor/templates/story.html), from the same
story (:func:`dealerbox.floor.telling.story.tell`), in the same card notation (``T♦``): the
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

__all__ = ["story_pdf", "find_font", "FontMissing", "FONT_DIRS", "FONT_FILES"]

#: Where Debian's fonts-dejavu-core puts DejaVu Sans.
FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"),)
#: The regular and bold faces.
FONT_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")
_FAMILY = "DejaVu"
_NEXT = {"new_x": XPos.LMARGIN, "new_y": YPos.NEXT}


class FontMissing(FloorError):
    """No font with the suit symbols is installed: the PDF cannot show the cards."""


def find_font(dirs=FONT_DIRS) -> tuple[Path, Path]:
    """The regular and bold DejaVu Sans files, else :class:`FontMissing` naming the package."""
    for directory in dirs:
        regular, bold = (Path(directory) / name for name in FONT_FILES)
        if regular.is_file() and bold.is_file():
            return regular, bold
    raise FontMissing("the floor's PDFs need DejaVu Sans for the suit symbols: install Debian's "
                      f"fonts-dejavu-core (looked in {', '.join(str(d) for d in dirs)})")


def _cards(cards: list[dict]) -> str:
    return " ".join("[unread]" if c["unread"] else c["text"] for c in cards) or "none"


class _Doc(FPDF):
    def __init__(self, footer: str, fonts: tuple[Path, Path]):
        super().__init__(orientation="P", unit="mm", format="A4")
        self.footer_text = footer
        self.add_font(_FAMILY, "", str(fonts[0]))
        self.add_font(_FAMILY, "B", str(fonts[1]))
        self.set_auto_page_break(True, margin=15)
        self.set_title(footer)
        self.set_creator("dealerbox floor")

    def footer(self):
        self.set_y(-12)
        self.set_font(_FAMILY, "", 8)
        self.cell(0, 5, f"{self.footer_text}, page {self.page_no()}/{{nb}}", align="C")

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
        self.cell(42, 5.5, label)
        self.set_font(_FAMILY, "", 10)
        self.multi_cell(0, 5.5, text, **_NEXT)


def story_pdf(story: dict, *, heading: str, when, dealer: str, ended_by: str, permalink: str,
              fonts: tuple[Path, Path] | None = None) -> bytes:
    """The story as PDF bytes. *heading* is the page's title, *when* turns an epoch second
    into the floor's local time with its zone, *dealer* and *ended_by* are the page's
    words for them, *permalink* the page's own address."""
    doc = _Doc(heading, fonts or find_font())
    doc.add_page()
    doc.heading(heading, 15)
    doc.para(permalink, 9)
    doc.ln(2)
    doc.row("Dealer", dealer)
    players = story["players"] if story["players"] is not None else "not recorded"
    doc.row("Players", f"{players} ({story['hole_cards']} hole cards each)")
    doc.row("Started", when(story["started"]))
    doc.row("Last line", when(story["ended"]))
    doc.row("Ended by", ended_by)
    doc.row("Journal lines", f"{story['start_seq']} to {story['end_seq']}")

    doc.heading("Seats")
    for seat in story["seats"]:
        doc.row(seat["seat"], _cards(seat["cards"]))
    if story["extra_deal"]:
        doc.row("beyond the deal", _cards(story["extra_deal"]))

    doc.heading("The board as laid")
    for street in story["streets"]:
        text = f"burned {_cards(street['burns'])}; laid {_cards(street['cards'])}"
        if street["taken_off"]:
            text += f"; taken off the board {_cards(street['taken_off'])}"
        doc.row(street["street"], text)
    doc.row("Board", _cards(story["board_cards"]) if story["board_cards"] else "no card was laid on the board")

    doc.heading("Irregularities")
    if not story["irregularities"]:
        doc.para("No irregularity: the box decided nothing in this hand beyond play on.")
    for n, e in enumerate(story["irregularities"], 1):
        doc.set_font(_FAMILY, "B", 10)
        doc.multi_cell(0, 5.5, f"{n}. {e['irregularity']}: {', then '.join(e['verdicts']).upper()}", **_NEXT)
        meta = f"Seen {when(e['wall'])} (line {e['seq']}), {e['phase'] or 'phase not recorded'}"
        if e["cards"]:
            meta += f"; cards {' '.join(e['cards'])}"
        if e["rule"]:
            meta += f"; rule {e['rule']}"
        doc.para(meta, 9)
        for k, step in enumerate(e["steps"], 1):
            by = f", on {step['by']} (line {step['cause']})" if step.get("by") else f" (line {step['seq']})"
            seen = (f"Seen done {when(step['wall'])}{by}." if step["done"] else
                    "No correction asked: the box said play on." if step["done"] is None else "NOT SEEN DONE.")
            doc.set_x(doc.l_margin + 5)
            doc.multi_cell(0, 5, f"{k}. {step['text']} {seen}", **_NEXT)
        if e["record"]:
            doc.para(f"At HAND OVER, {when(e['record']['wall'])} (line {e['record']['seq']}): "
                     f"{e['record']['text']}", 9)
        doc.ln(1)
    if story["after_hand"]:
        doc.heading("Recorded after HAND OVER")
        for e in story["after_hand"]:
            cards = f", cards {' '.join(e['cards'])}" if e["cards"] else ""
            doc.para(f"{e['irregularity']} ({when(e['wall'])}, line {e['seq']}){cards}: "
                     + " ".join(s["text"] for s in e["steps"]))

    doc.heading("Cards in the order they left the shoe")
    doc.para(_cards(story["shoe"]))

    doc.heading("Everything the table recorded")
    doc.set_font(_FAMILY, "", 8)
    for e in story["timeline"]:
        doc.multi_cell(0, 4, f"{e['seq']:>8}  {when(e['wall'])}  {e['what']}", **_NEXT)
    return bytes(doc.output())
