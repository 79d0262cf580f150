"""Which repository a request is about: named in its text, given on the command line, or the place's default.

A request names a repository in one of three written forms:

    repo:acme/billing@main          explicit, with an optional base branch
    https://github.com/acme/billing (a URL of the configured git host; /tree/BRANCH gives the base)
    in acme/billing                 only when it cannot be a path: the name is allow-listed, or "repo"
                                    or "repository" stands beside it ("in the acme/billing repo")

``resolve`` then applies the allow-list: a repository that is not a ``[repos."owner/name"]`` table, or one the
person may not use, is refused with a sentence, before any model call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from agents.errors import UserInputError
from bot.config.sections import ReposConfig, RepoSettings
from bot.repos.people import listed

_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,99})"
# A base branch is read up to the first space or character no branch name holds (``~^:?*[\``, quotes, ``#``), so
# a name is never silently cut short (``@v2é`` is not ``@v2``); what follows it in a sentence (``.,;)``) is dropped,
# and what remains must be a name git accepts, or the request is refused with a sentence.
_BRANCH = r"[^\s~^:?*\[\\#<>|\"'`\u2018-\u201f\u00ab\u00bb\u2039\u203a]{1,200}"  # typographic quotes too
_EXPLICIT = re.compile(rf"(?<![\w/])repo:(?P<owner>{_PART})/(?P<name>{_PART})(?:@(?P<base>{_BRANCH}))?")
_URL = re.compile(rf"https?://(?:[^\s/?#@]+@)?(?P<host>[A-Za-z0-9.:-]+)/(?P<owner>{_PART})/(?P<name>{_PART})"
                  rf"(?:/tree/(?P<base>{_BRANCH}))?")
_IN = re.compile(rf"\bin\s+(?:the\s+)?(?P<owner>{_PART})/(?P<name>{_PART})(?P<after>\s+(?:repo|repository)\b)?",
                 re.IGNORECASE)
_REPO_BEFORE = re.compile(r"\b(?:repo|repository)\s*$", re.IGNORECASE)
_SAFE_BRANCH = re.compile(r"(?!.*\.\.)(?!.*//)(?!/)(?!.*/$)(?!-)(?!.*/\.)[\w./-]{1,200}(?<!\.lock)(?<!\.)")
# Punctuation of the sentence around a name, never its last character (a phone's "…", a CJK sentence's "。，）").
_AFTER_BRANCH = ".,;:)]}!*\u2026\u3001\u3002\uff01\uff09\uff0c\uff1a\uff1b\uff1f"


@dataclass(frozen=True)
class RepoName:
    """A repository a request names: ``owner/name`` on the git host, or a local folder (``path``)."""

    full_name: str = ""  # "acme/billing"; empty for a local folder
    base: str = ""  # the branch to start from; empty: the configured base, else the default branch
    path: str = ""  # a folder on this machine (the terminal's --repo PATH)

    @property
    def shown(self) -> str:
        return self.full_name or self.path


@dataclass(frozen=True)
class RepoTarget:
    """A repository a run may work on: its name, the base branch to use and its settings."""

    name: RepoName
    settings: RepoSettings

    @property
    def base(self) -> str:
        return self.name.base or self.settings.base


def named_in(text: str, config: ReposConfig) -> RepoName | None:
    """The repository the request's text names, if it names one (the module docstring gives the forms)."""
    if match := _EXPLICIT.search(text):
        return _name(match["owner"], match["name"], match["base"])
    for match in _URL.finditer(text):
        if _same_host(match["host"]) == _host(config.git_url):
            return _name(match["owner"], match["name"], match["base"])
    for match in _IN.finditer(text):
        full = f"{match['owner']}/{_without_git(match['name'])}"
        if _known(full, config) or match["after"] or _REPO_BEFORE.search(text[: match.start()]):
            return _name(match["owner"], match["name"], None)
    return None


def from_argument(value: str, base: str = "", git_url: str = "") -> RepoName:
    """``--repo OWNER/NAME|URL|PATH``: a folder that exists is a local repository; else a name or a URL (of the
    host ``git_url`` names, when given)."""
    value = value.strip()
    if match := re.fullmatch(rf"(?P<owner>{_PART})/(?P<name>{_PART})/?", value):
        if not Path(value).exists():
            return _name(match["owner"], match["name"], base or None)
    if value.startswith(("http://", "https://")):
        host, _, after_host = value.split("://", 1)[1].partition("/")  # by hand: urlsplit refuses "[...]" in a host
        host = _same_host(host.rpartition("@")[2])
        if git_url and host != _host(git_url):
            raise UserInputError(f"--repo {value}: this bot works on repositories of {_host(git_url)} ([repos] "
                                 f"git_url), not of {host}.")
        parts = [p for p in re.split(r"[?#]", after_host, maxsplit=1)[0].split("/") if p]
        if len(parts) == 2:
            return _name(parts[0], parts[1], base or None)
        if len(parts) > 3 and parts[2] == "tree":  # a branch's page: the base, unless --base says another
            branch = _branch("/".join(parts[3:]))
            if base and _branch(base) != branch:
                raise UserInputError(f"--repo {value} names the branch {branch}, and --base names {base}: "
                                     "give one of them.")
            return _name(parts[0], parts[1], branch)
        raise UserInputError(f"--repo {value}: a repository URL ends in /OWNER/NAME (or /OWNER/NAME/tree/BRANCH).")
    path = Path(value).expanduser()
    if not path.is_dir():
        raise UserInputError(f"--repo {value}: no such folder, and not OWNER/NAME or a repository URL.")
    return RepoName(path=str(path.resolve()), base=_branch(base) if base else "")


def resolve(named: RepoName | None, config: ReposConfig, places: Sequence[str], user: str,
            terminal: bool = False, platform: str = "terminal") -> RepoTarget | None:
    """The repository the run works on (the one named, else the place's default), checked against the
    allow-list; ``UserInputError`` with one sentence when it may not be used. None: no repository."""
    if named is None:
        named = default_for(places, config)
        if named is None:
            return None
    if named.path:
        if not (terminal and config.local_paths):
            raise UserInputError("A folder on the bot's machine can be worked on only from its terminal "
                                 "(`codegen-chat run --repo PATH`, with [repos] local_paths = true).")
        return RepoTarget(named, RepoSettings())
    settings = _settings(named.full_name, config)
    if settings is None:
        raise UserInputError(f"The repository {named.full_name} is not one this bot may work on; an admin adds it "
                             f'to config.toml as a [repos."{named.full_name}"] table.')
    if not may_ask(settings, platform, user):
        raise UserInputError(f"You are not on the list of people who may ask for work on {named.full_name} "
                             f'([repos."{named.full_name}"] users).')
    return RepoTarget(named, settings)


def may_ask(settings: RepoSettings, platform: str, user: str) -> bool:
    """Whether the person may ask for work on (or have the bot read) a repository of these settings."""
    return not settings.users or listed(settings.users, platform, user)


def may_read(full_name: str, config: ReposConfig, platform: str, user: str) -> bool:
    """Whether the bot may read ``owner/name`` for the person: a repository whose table lists its users is theirs
    alone (one with no table is left to the other rules, such as ``[input] link_repositories``)."""
    settings = _settings(full_name, config)
    return settings is None or may_ask(settings, platform, user)


def default_for(places: Sequence[str], config: ReposConfig) -> RepoName | None:
    """The repository configured as the default where the request was made: its channel's ("slack:C0123"),
    else its server's ("discord:GUILD"), else the platform's ("web", "terminal")."""
    for place in places:
        for full, settings in config.allowed.items():
            if place in settings.defaults_for:
                return RepoName(full_name=full)
    return None


def _settings(full_name: str, config: ReposConfig) -> RepoSettings | None:
    wanted = full_name.lower()  # GitHub's names are case-insensitive
    return next((s for name, s in config.allowed.items() if name.lower() == wanted), None)


def _known(full_name: str, config: ReposConfig) -> bool:
    return _settings(full_name, config) is not None


def _name(owner: str, name: str, base: str | None) -> RepoName:
    return RepoName(full_name=f"{owner}/{_without_git(name)}", base=_branch(base) if base else "")


def _without_git(name: str) -> str:
    return name.removesuffix(".git").rstrip(_AFTER_BRANCH)


def _branch(base: str) -> str:
    base = base.rstrip(_AFTER_BRANCH)
    if not _SAFE_BRANCH.fullmatch(base):
        raise UserInputError(f"{base!r} is not a branch name git accepts.")
    return base


def _host(url: str) -> str:
    host = _same_host((urlsplit(url).netloc or "").rpartition("@")[2])
    return "github.com" if host == "api.github.com" else host


def _same_host(host: str) -> str:
    """A host as any way of writing it gives it: any case, a final dot, the scheme's default port, ``www.``
    (GitHub answers at www.github.com too)."""
    host = host.lower()
    for default_port in (":443", ":80"):
        host = host.removesuffix(default_port)
    return host.rstrip(".").removeprefix("www.")
