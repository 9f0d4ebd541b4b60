"""The exception hierarchy.

Everything the box raises on purpose derives from :class:`DealerboxError`. Each
leaf also inherits the builtin a caller would naturally catch, so
``except ValueError`` still works for a bad config and ``except OSError`` for a
reader that went away.
"""

from __future__ import annotations


class DealerboxError(Exception):
    """Root of every error the box raises on purpose."""


class ConfigError(DealerboxError, ValueError):
    """A configuration, profile, message or registry file is not valid.

    The message always names the file, the key, the value found and what was
    expected, so a technician can fix the file without reading code.
    """

    def __init__(self, file, key: str, expected: str, value=None, *, found: bool = True):
        self.file = str(file)
        self.key = key
        self.expected = expected
        self.value = value
        if key == "(file)":
            # The file itself: say why it cannot be read, not a quoted repr of an OSError.
            super().__init__(f"{self.file}: cannot read it ({value}): expected {expected}")
            return
        got = f" = {_shown(value)}" if found else " is missing"
        super().__init__(f"{self.file}: {key}{got}: expected {expected}")


#: Characters of a bad value :func:`shown` quotes in an error message.
SHOWN_CHARS = 40


def shown(value, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to a readable length for an error message (escaped as ``repr``
    escapes: a NUL or a lone surrogate is shown as its escape, never written raw)."""
    try:
        text = repr(value)
    except ValueError:  # an int too long for str() (Python's digit limit)
        return f"a number of more than {limit} digits"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _shown(value, limit: int = 80) -> str:
    """*value*'s repr, cut to *limit* characters so one message stays readable."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class RegistryError(DealerboxError, ValueError):
    """A tag UID or a deck registry entry is malformed."""


class EventError(DealerboxError, ValueError):
    """An event does not follow CONTRACT.md, or an event file cannot be read.

    The text names the file and the line when they are known
    (``FILE: line N: 'key' must be ...``); ``message`` is the bare problem.
    """

    def __init__(self, message: str, line: int | None = None, *, file: str | None = None,
                 key: str | None = None):
        self.message = message
        self.line = line
        self.file = file
        self.key = key
        where = [file] if file else []
        if line is not None:
            where.append(f"line {line}")
        super().__init__(": ".join(where + [message]))


class UsageError(DealerboxError, ValueError):
    """A command cannot do what it was asked with what it was given (a missing extra,
    a config that does not fit the command). The CLI prints it as one line and exits 2."""


class HardwareError(DealerboxError, OSError):
    """A device could not be opened, or stopped answering."""


class ReaderError(HardwareError):
    """A card reader failed: unplugged, stalled or answering garbage."""


class JournalError(DealerboxError, ValueError):
    """The journal is damaged: a line changed, removed or inserted."""


class FloorError(DealerboxError, OSError):
    """Floor reporting cannot work: a broker, a certificate or a store is missing or refused."""
