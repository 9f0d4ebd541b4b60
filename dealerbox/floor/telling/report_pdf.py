"""The shift report as a PDF (fpdf2, pure Python, as a hand's story: dealerbox/floor/telling/story_pdf.py):
what the pit boss files at the end of a shift.

It draws the report's labelled sections (:func:`dealerbox.floor.telling.report.report_sections`),
so its rows and columns say what the page's say: each section a heading, a table with
its column headings repeated on every page, its notes; a link where the page has one
(an alert's hand, a table, a dealer) when the sections were made with the floor's address.
Names and dashes need a Unicode font: DejaVu Sans, found as the story's PDF finds it
(:func:`~dealerbox.floor.telling.story_pdf.find_font`; without it, :class:`~dealerbox.floor.telling.story_pdf.FontMissing`).
"""

from __future__ import annotations

import re

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from dealerbox.floor.telling.story_pdf import find_font

__all__ = ["sections_pdf", "floor_pdf", "column_widths", "figure_columns"]

_FAMILY = "DejaVu"
_NEXT = {"new_x": XPos.LMARGIN, "new_y": YPos.NEXT}
#: The text's size in points, and a table row's height in mm.
_SIZE, _ROW = 8, 5.0
#: A column is never narrower than this (mm), nor wider than this share of the page.
_NARROWEST, _WIDEST_SHARE = 14.0, 0.4
#: A cell of a column of figures: right-aligned, as on the page.
_FIGURE = re.compile(r"^(-?\d+([\u00a0\u202f ,.]\d{3})*([.,]\d+)?|–|no hands|\d+ (h|min|s)( \d+ (min|s))?)$")
#: The footer's words: the report's, then its page of how many (a language's own, when given).
PAGE_WORDS = "%(footer)s, page %(page)s/%(pages)s"


def figure_columns(rows: list[list[dict]]) -> list[bool]:
    """Which columns hold figures only (every cell a number, a duration or a dash): they align right."""
    width = max((len(r) for r in rows), default=0)
    return [i > 0 and all(r[i].get("figure") or _FIGURE.match(r[i]["text"]) for r in rows if i < len(r))
            for i in range(width)]


def column_widths(columns: list[str], rows: list[list[dict]], width: float, measure) -> list[float]:
    """Widths (mm) for a table at most *width* wide: each column as wide as its longest cell
    or its heading's longest word (*measure* gives a text's width), all narrowed alike when
    they would not fit."""
    wanted = []
    for i, heading in enumerate(columns):
        # A heading is bold (a tenth wider) and wraps to three lines at most, never inside a word.
        head = max(max(measure(w) for w in heading.split()), measure(heading) / 3) * 1.15
        longest = max([head] + [measure(r[i]["text"]) for r in rows if i < len(r)])
        wanted.append(min(max(_NARROWEST, longest + 4.0), width * _WIDEST_SHARE))
    scale = min(1.0, width / sum(wanted))
    return [w * scale for w in wanted]


class _Doc(FPDF):
    def __init__(self, title: str, footer: str, page_words: str = PAGE_WORDS):
        super().__init__(orientation="L", unit="mm", format="A4")
        self.page_words = page_words
        regular, bold = find_font()
        self.add_font(_FAMILY, "", str(regular))
        self.add_font(_FAMILY, "B", str(bold))
        self.footer_text = footer
        self.set_title(title)
        self.set_creator("dealerbox floor")
        self.set_auto_page_break(True, margin=14)
        self._heads: list[dict] = []

    def footer(self):
        self.set_y(-10)
        self.set_font(_FAMILY, "", 7)
        self.cell(0, 4, self.page_words % {"footer": self.footer_text, "page": self.page_no(), "pages": "{nb}"},
                  align="C")

    def _row(self, cells: list[dict], widths: list[float], right: list[bool], *, bold: bool = False) -> None:
        self.set_font(_FAMILY, "B" if bold else "", _SIZE)
        lines = [self.multi_cell(w - 1, _ROW, c["text"], dry_run=True, output="LINES") for c, w in zip(cells, widths)]
        height = _ROW * max(len(x) for x in lines)
        if self.will_page_break(height + 1):
            self.add_page()
            if not bold and self._heads:
                self._row(self._heads, widths, right, bold=True)
            self.set_font(_FAMILY, "B" if bold else "", _SIZE)
        top = self.get_y()
        x = self.l_margin
        for cell, w, align_right in zip(cells, widths, right):
            # Headings sit at the foot of their row, over their figures.
            self.set_xy(x, top + (height - _ROW * len(self.multi_cell(w - 1, _ROW, cell["text"], dry_run=True,
                                                                       output="LINES")) if bold else 0))
            link = cell["href"] if cell.get("href") and "://" in cell["href"] else ""
            if link:
                self.set_text_color(0, 70, 160)
            self.multi_cell(w - 1, _ROW, cell["text"], align="R" if align_right else "L", link=link,
                            new_x=XPos.RIGHT, new_y=YPos.TOP)
            self.set_text_color(0, 0, 0)
            x += w
        self.line(self.l_margin, top + height, self.l_margin + sum(widths), top + height)
        self.set_xy(self.l_margin, top + height + 0.4)

    def table(self, columns: list[str], rows: list[list[dict]]) -> None:
        self.set_font(_FAMILY, "", _SIZE)
        widths = column_widths(columns, rows, self.epw, self.get_string_width)
        right = figure_columns(rows) + [False] * (len(columns) - len(figure_columns(rows)))
        self._heads = [{"text": c} for c in columns]
        self._row(self._heads, widths, right, bold=True)
        for row in rows:
            self._row(row, widths, right)
        self._heads = []


def floor_pdf(title: str, sections: list[dict], gettext) -> bytes:
    """:func:`sections_pdf` with the floor's footer (``dealerbox floor, <title>, page 1/3``) in
    the language of *gettext* (a reader's :class:`~dealerbox.floor.telling.language.Language`'s)."""
    return sections_pdf(title, sections, footer=gettext("dealerbox floor, %(title)s") % {"title": title},
                        page_words=gettext("%(footer)s, page %(page)s/%(pages)s"))


def sections_pdf(title: str, sections: list[dict], *, footer: str, page_words: str = PAGE_WORDS) -> bytes:
    """A landscape A4 PDF: *title*, then each section (``heading``, ``columns``, ``rows`` of
    cells ``text``/``href``, ``figure``, ``empty``, ``notes``) as a table with its notes;
    *page_words* the footer's (``%(footer)s, page %(page)s/%(pages)s``, in the reader's language)."""
    doc = _Doc(title, footer, page_words)
    doc.add_page()
    doc.set_font(_FAMILY, "B", 15)
    doc.multi_cell(0, 8, title, **_NEXT)
    for section in sections:
        if doc.will_page_break(40):  # a heading never ends a page without its table's first rows
            doc.add_page()
        doc.ln(3)
        doc.set_font(_FAMILY, "B", 11)
        doc.multi_cell(0, 6, section["heading"], **_NEXT)
        if section["rows"]:
            doc.table(section["columns"], section["rows"])
        else:
            doc.set_font(_FAMILY, "", 9)
            doc.multi_cell(0, 5, section["empty"], **_NEXT)
        doc.set_font(_FAMILY, "", 7.5)
        for note in section["notes"]:
            doc.multi_cell(0, 4, note, **_NEXT)
    return bytes(doc.output())
