"""What PostgreSQL's failures mean for a person: psycopg's errors (by SQLSTATE class, or the pool's own) turned
into one ``StoreError`` sentence naming the database (its URL with the password masked) and the remedy."""

from __future__ import annotations

import psycopg
import psycopg_pool

from bot.store.errors import StoreError

# SQLSTATE (whole code first, then its two-character class) -> (what happened, what to do)
_PROBLEMS = {
    "28P01": ("the server refused the password", "check the password in storage.url (or PGPASSWORD)"),
    "28": ("the server refused the login", "check the user and password in storage.url, and the server's pg_hba.conf"),
    "3D000": ("the database does not exist", "create it (createdb NAME) or name another one in storage.url"),
    "42501": ("the database user lacks a permission it needs", "grant the user ownership of the database's schema"),
    "53100": ("the database server's disk is full", "free some space on the server"),
    "53300": ("the database server has no free connection", "raise max_connections or run fewer replicas"),
    "53": ("the database server is out of resources", "check the server's memory, disk and connections"),
    "25006": ("the database server is read-only (a standby)", "point storage.url at the primary"),
    "57P": ("the database server is shutting down or restarting", "try again once it is back"),
    "08": ("the connection to the database server failed", "check that PostgreSQL runs at the address in storage.url"),
    "40": ("the database server rolled the write back (a conflict with another write)", "try again"),
    "XX": ("the database server reported an internal error", "see its log"),
}


# libpq's own words when a connection is refused before any SQLSTATE is sent -> the SQLSTATE they stand for
_CONNECTION_REFUSALS = {
    "password authentication failed": "28P01",
    "no password supplied": "28P01",
    "no pg_hba.conf entry": "28000",
    "role \"": "28000",  # role "x" does not exist
    "database \"": "3D000",  # database "x" does not exist
    "too many clients": "53300",
    "the database system is starting up": "57P03",
    "the database system is shutting down": "57P03",
    "the database system is in recovery mode": "57P03",
}


def store_error(doing: str, where: str, error: BaseException) -> StoreError:
    """``doing`` is what failed, as in "could not {doing} {where}": "save the run to", "read"."""
    what, fix = _problem(error)
    kept = "; what was saved before is kept" if doing.startswith("save") else ""
    return StoreError(f"could not {doing} {where}: {what}; {fix}{kept}")


def _problem(error: BaseException) -> tuple[str, str]:
    if isinstance(error, psycopg_pool.PoolTimeout):
        return ("no connection to the database server could be had in time",
                "check that PostgreSQL runs at the address in storage.url and accepts connections")
    code = getattr(error, "sqlstate", None) or _refusal_code(str(error))
    for key in (code, code[:3], code[:2]):
        if key and key in _PROBLEMS:
            return _PROBLEMS[key]
    if isinstance(error, psycopg.OperationalError):  # no SQLSTATE: libpq could not connect or lost the connection
        return f"the database server cannot be reached ({_first_line(error)})", \
            "check that PostgreSQL runs at the address in storage.url"
    return _first_line(error) or type(error).__name__, "see the log for details"


def _refusal_code(message: str) -> str:
    return next((code for words, code in _CONNECTION_REFUSALS.items() if words in message), "")


def _first_line(error: BaseException) -> str:
    """libpq's message, first line only and without its prefix; it never holds the password (the URL's secrets
    are masked in every log line and reply as well)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return text.removeprefix("connection failed: ").rstrip(".")
