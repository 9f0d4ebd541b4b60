"""What every device of the box has in common."""

from __future__ import annotations


class Device:
    """A device is open from construction until :meth:`close`, and a context manager.

    Subclasses must override :meth:`close`: release the hardware, set
    ``self._closed``, and do nothing when called again.
    """

    _closed = False

    def close(self) -> None:
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
