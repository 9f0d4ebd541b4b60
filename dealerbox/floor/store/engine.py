"""Where a floor store is and how it is reached: an SQLite file, or a PostgreSQL URL.

Both are driven through SQLAlchemy engines made here, so the store, the figures
and a move between backends meet the database with the same settings.
"""

from __future__ import annotations

from sqlalchemy import create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.pool import StaticPool

from dealerbox.errors import FloorError

__all__ = ["StoreUnavailable", "is_store_url", "describe_target", "store_engine", "reason", "LOCK_WAIT_S", "RANDOM_PAGE_COST"]

#: How long a statement waits for another connection's lock before it fails.
LOCK_WAIT_S = 30
#: What PostgreSQL's planner is told a page read out of order costs against one read in
#: order (its default, 4, is a spinning disk's). A page reads the days it shows, and those
#: are in memory: at PostgreSQL's default, on a store of ten days in the order they were filed,
#: a dealer's shift was read through the index on the time alone, 20,000 hands to find 666
#: (12 to 24 ms a statement) rather than through the dealer's own (0.3 ms), and a dealer's page
#: took 1.6 times as long as on a store of one day. 1.1 is the manual's figure for such storage.
RANDOM_PAGE_COST = 1.1


class StoreUnavailable(FloorError, ConnectionError):
    """The store's database cannot be reached (or a store URL names no backend it knows)."""


def is_store_url(target) -> bool:
    """True when *target* is a database URL (``postgresql://...``) rather than an SQLite file."""
    return isinstance(target, str) and "://" in target


def describe_target(target) -> str:
    """*target* as logs and messages may show it: a URL without its password."""
    if is_store_url(target):
        try:
            return make_url(target).render_as_string(hide_password=True)
        except (ArgumentError, ValueError):   # ValueError: several hosts with ports in the netloc
            return "a store URL that cannot be read"
    return str(target)


def store_engine(target):
    """An SQLAlchemy engine on *target*: an SQLite file's path, or a ``postgresql://`` URL.

    A PostgreSQL URL is driven by psycopg 3 whichever driver it names; its connections
    are checked before use, so a server restarted since is met with a new connection, and
    wait up to :data:`LOCK_WAIT_S` for a lock; the planner is told :data:`RANDOM_PAGE_COST`.
    On SQLite every connection waits up to :data:`LOCK_WAIT_S` for another's write lock
    and syncs each commit to the disk.
    """
    if is_store_url(target):
        try:
            url = make_url(target)
        except ArgumentError as exc:
            raise StoreUnavailable(f"the store URL cannot be read: {exc}") from None
        if url.get_backend_name() != "postgresql":
            raise StoreUnavailable(f"{describe_target(target)}: the store is an SQLite file's path "
                                   "or a postgresql:// URL")
        url = url.set(drivername="postgresql+psycopg")
        return create_engine(url, pool_pre_ping=True, pool_size=4, max_overflow=4,
                             connect_args={"connect_timeout": 10,
                                           "options": f"-c lock_timeout={LOCK_WAIT_S * 1000} "
                                                      f"-c random_page_cost={RANDOM_PAGE_COST}"})
    if str(target) == ":memory:":
        # One in-memory database for every thread that uses the engine (tests' throwaway stores).
        engine = create_engine("sqlite://", poolclass=StaticPool,
                               connect_args={"timeout": LOCK_WAIT_S, "check_same_thread": False})
    else:
        engine = create_engine(f"sqlite:///{target}", connect_args={"timeout": LOCK_WAIT_S})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record):
        dbapi_conn.execute(f"PRAGMA busy_timeout = {LOCK_WAIT_S * 1000}")
        dbapi_conn.execute("PRAGMA synchronous = FULL")
    return engine


def reason(exc: DBAPIError) -> str:
    """The database's own words for *exc*, on one line."""
    return " ".join(str(exc.orig).split()) or type(exc.orig).__name__
