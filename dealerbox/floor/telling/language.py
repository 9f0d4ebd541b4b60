"""One reader's language: the words (the floor's gettext catalogs), the forms of numbers and
moments (:class:`~.room_forms.RoomForms`) and the irregularities' names (the table's message
catalogs, their one source) that a page, a stream or a file is told in.

A request picks the :class:`Language` of whoever asks (the user's own, else the room's
``[web] language``; before sign-in, the browser's ``Accept-Language``). A Language holds no
reader's state: the web view keeps one per language (:class:`Languages`), and every page,
template and wording function is handed the one it tells in, never a global, so two users
reading two languages at once never get each other's words.
"""

from __future__ import annotations

from dealerbox.domain.messages import Messages, load_messages
from dealerbox.floor.telling.catalogs import LANGUAGES, language_name, translations
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.room_forms import RoomForms

__all__ = ["Language", "Languages"]


class Language:
    """The floor in the language *code* (``en``, ``cs``, ``sk``, ``de``), moments in *clock*'s zone.

    :attr:`gettext` and :attr:`ngettext` translate the floor's messages (``ngettext`` by the
    language's plural rules: Czech and Slovak have three forms); :attr:`forms` formats numbers
    and moments; :attr:`messages` names the irregularities and phases as the LCD does."""

    def __init__(self, code: str, clock: FloorClock | None = None):
        self.code = code
        self.clock = clock if clock is not None else FloorClock()
        self.translations = translations(code)
        self.gettext = self.translations.gettext
        self.ngettext = self.translations.ngettext
        self.forms = RoomForms(code, self.clock)
        self.messages: Messages = load_messages(code)
        #: The language in its own words (``čeština``), as the language menu lists it.
        self.name = language_name(code)

    def __repr__(self) -> str:
        return f"Language({self.code!r})"


class Languages:
    """Each of the floor's languages once, in one zone; :meth:`get` falls back to the room's."""

    def __init__(self, default: str, clock: FloorClock):
        self.default = default
        self.by_code = {code: Language(code, clock) for code in LANGUAGES}

    def get(self, code: str | None) -> Language:
        """The language *code*; the room's for ``None`` or a code the floor does not speak."""
        return self.by_code.get(code or "", self.by_code[self.default])

    def __iter__(self):
        return iter(self.by_code.values())
