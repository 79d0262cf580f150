"""Fetching a repository's base branch and laying out its files, with nothing of the repository run.

In three steps, so the team can start from the map while most of the files are still on their way:

    fetch        git clone --bare --depth 1 --single-branch --no-tags --filter=blob:none --branch BASE URL
                 the tree only (paths, no file contents): the file count is capped here
    fetch_files  the contents of a few named files (the map's, the task's), asked for by blob id
    fetch_rest   every other file up to MAX_FILE_BYTES (git fetch --refetch --filter=blob:limit=...)

The files are written out by this module, not by ``git checkout``: no ``.gitattributes`` filter, smudge
driver, LFS or hook can take part, a link is never made (it is left out and named), a submodule is never
fetched, a Git LFS pointer is left out (its file is not in git), and a path that would leave the folder (git's
fsck refuses those already) is refused again here.
Larger files than the limit are never fetched by ``fetch_rest``; a fetch by blob id brings a blob whatever its
size (git's size filter spares what is asked for by name), so ``fetch_files`` reads each blob's size before its
contents, and one over the limit is left unread. The packed bytes are watched while git fetches: past
``max_bytes`` the fetch is stopped, with a sentence; the files written out hold at most ``max_bytes`` too, and
are read from git a few megabytes at a time.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bot.repos.errors import RepoError, TooLarge
from bot.repos.git import Git, GitFailed
from bot.safety.text import not_text

REGULAR, EXECUTABLE, LINK, SUBMODULE = "100644", "100755", "120000", "160000"
_KINDS = {LINK: "a link", SUBMODULE: "a submodule"}
_EMPTY = "The repository is empty: it has no commit to start from."
# A Git LFS file is kept in git as a small pointer ("version https://git-lfs.github.com/spec/v1", its oid, its size),
# its contents on the LFS server, which the bot never fetches: the pointer is not the file, so it is left out, as a
# too large file is, rather than shown to the team as the file's text (and rewritten as a plain blob).
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\n"
LFS_POINTER_BYTES = 1024  # the most a pointer holds, by the LFS specification
LFS_FILE = "a Git LFS file: its contents are kept outside git, and the bot never fetches them"
READ_BYTES = 8_000_000  # file contents read from git in one call (or one file, if larger): what the bot holds at once


@dataclass(frozen=True)
class Limits:
    max_files: int
    max_bytes: int
    max_file_bytes: int


@dataclass
class Checkout:
    """A fetched branch: the bare git folder, the files written out, and what was left out and why."""

    git_dir: Path
    tree: Path
    branch: str
    head: str
    files: dict[str, str] = field(default_factory=dict)  # path -> blob id, every file written
    modes: dict[str, str] = field(default_factory=dict)  # path -> git file mode, for every tree entry kept
    left_out: dict[str, str] = field(default_factory=dict)  # path -> why it is not in the folder
    blobs: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (mode, blob id) of each regular file
    complete: bool = False  # every file that can be had is written (``fetch_rest`` ran)
    _names: tuple[frozenset[str], dict[str, str]] | None = field(default=None, repr=False, compare=False)

    @property
    def paths(self) -> list[str]:
        return list(self.blobs)

    def clash(self, path: str) -> str:
        """Why a file written at ``path`` would take the place of something else of the tree ('' when it would
        not): git keeps one entry per path, so the commit would drop a folder with all it holds, a file or link
        where the path needs a folder, a link or a submodule; and a name that differs from one of the tree only
        in case is the same file on macOS and Windows."""
        mode = self.modes.get(path)
        if mode is not None and mode not in (REGULAR, EXECUTABLE):
            return f"it is {_KINDS.get(mode, 'an entry of another kind')} in the repository, which the bot leaves as is"
        folders, by_case = self._tree_names()
        if path in folders:
            return "it is a folder of the repository: a file there would remove everything in it"
        parts = path.split("/")
        for above in ("/".join(parts[:i]) for i in range(1, len(parts))):
            if above in self.modes:
                return f"{above} is {_KINDS.get(self.modes[above], 'a file')} of the repository, not a folder"
        for name in ("/".join(parts[:i]) for i in range(1, len(parts) + 1)):
            same = by_case.get(name.casefold(), name)
            if same != name and name not in self.modes and name not in folders:
                return (f"the repository has {same}, which differs from {name} only in case (one name on macOS and "
                        "Windows)")
        return ""

    def _tree_names(self) -> tuple[frozenset[str], dict[str, str]]:
        """The tree's folders, and every name of the tree by its case-folded form (``modes`` is set once, at
        the fetch)."""
        if self._names is None:
            folders = frozenset("/".join(p.split("/")[:i]) for p in self.modes for i in range(1, p.count("/") + 1))
            self._names = folders, {name.casefold(): name for name in sorted(folders | set(self.modes))}
        return self._names


async def fetch(git: Git, url: str, base: str, where: Path, limits: Limits) -> Checkout:
    """Clone ``base`` (empty: the default branch) of ``url`` into ``where``: its tree, no file contents yet."""
    git_dir, tree = where / "git", where / "tree"
    tree.mkdir(parents=True)
    args = ["clone", "--bare", "--quiet", "--depth", "1", "--single-branch", "--no-tags", "--filter=blob:none"]
    args += ["--branch", base] if base else []
    args += git.access.clone_options()
    try:
        await git.run([*args, "--", url, str(git_dir)], where, watch=where, max_bytes=limits.max_bytes)
    except GitFailed as error:
        # GitHub names a default branch for an empty repository too: the clone then misses the branch, not a commit.
        if _no_such_branch(error) and await _no_branch_at_all(git, url, where):
            raise RepoError(_EMPTY) from None
        raise RepoError(_clone_problem(error, url, base)) from None
    head = await _head(git, git_dir, url)
    if base:
        await _refuse_a_tag(git, git_dir, base)
    branch = base or await _branch_of_head(git, git_dir)
    checkout = Checkout(git_dir, tree, branch, head)
    entries = await _entries(git, git_dir)
    if len(entries) > limits.max_files:
        raise TooLarge(f"The repository has {len(entries):,} files; this bot works on at most {limits.max_files:,} "
                       "([repos] max_files).")
    _sort(entries, checkout)
    return checkout


async def fetch_files(git: Git, checkout: Checkout, paths: list[str], limits: Limits) -> None:
    """Fetch and write out these files (those not written yet), asked for by blob id: a bounded fetch."""
    wanted = [(*checkout.blobs[p], p) for p in dict.fromkeys(paths) if p in checkout.blobs and p not in checkout.files]
    if not wanted or checkout.complete:
        return
    present = set(await _local_blobs(git, checkout.git_dir))
    ask = sorted({oid for _, oid, _ in wanted if oid not in present})
    if ask:
        try:
            await git.run(["-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags",
                           "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin",
                           "origin"], checkout.git_dir, stdin="".join(f"{oid}\n" for oid in ask).encode(),
                          watch=checkout.git_dir, max_bytes=limits.max_bytes)
        except GitFailed as error:
            raise RepoError(f"The repository's files could not be fetched: {error}") from None
    sizes = await _local_blobs(git, checkout.git_dir)
    wanted = [w for w in wanted if w[1] in sizes and w[2] not in checkout.files]  # the rest's fetch may have them
    await _write_out(git, checkout, _within_limits(checkout, wanted, sizes, limits), sizes)


async def fetch_rest(git: Git, checkout: Checkout, limits: Limits) -> None:
    """Fetch every file up to ``max_file_bytes`` and write out those not written yet."""
    try:  # git's limit leaves out blobs of exactly that size too: one byte more keeps those of max_file_bytes
        await git.run(["fetch", "--quiet", "--refetch", "--depth", "1", "--no-tags", "--no-write-fetch-head",
                       "--recurse-submodules=no", f"--filter=blob:limit={limits.max_file_bytes + 1}", "origin",
                       checkout.head], checkout.git_dir, watch=checkout.git_dir, max_bytes=limits.max_bytes)
    except GitFailed as error:
        raise RepoError(f"The repository's files could not be fetched: {error}") from None
    sizes = await _local_blobs(git, checkout.git_dir)
    wanted = []
    for path, (mode, oid) in checkout.blobs.items():
        if oid not in sizes:
            checkout.left_out[path] = _too_large(limits)
        elif path not in checkout.files:
            wanted.append((mode, oid, path))
    await _write_out(git, checkout, _within_limits(checkout, wanted, sizes, limits), sizes)
    checkout.complete = True


def _within_limits(checkout: Checkout, wanted: list[tuple[str, str, str]], sizes: dict[str, int],
                   limits: Limits) -> list[tuple[str, str, str]]:
    """The files of ``wanted`` to write: one over ``max_file_bytes`` is left out and named (a fetch by blob id
    brought it; it is never read), and all the files written, these with those before, hold at most
    ``max_bytes`` (past it: ``TooLarge``, nothing more written)."""
    kept, total = [], sum(sizes.get(oid, 0) for oid in checkout.files.values())
    for mode, oid, path in wanted:
        if sizes[oid] > limits.max_file_bytes:
            checkout.left_out[path] = _too_large(limits)
        else:
            kept.append((mode, oid, path))
            total += sizes[oid]
    if total > limits.max_bytes:
        raise TooLarge(f"The repository's files hold over {limits.max_bytes:,} bytes, the most this bot works on "
                       "([repos] max_bytes).")
    return kept


def _too_large(limits: Limits) -> str:
    return f"larger than {limits.max_file_bytes:,} bytes ([repos] max_file_bytes)"


async def default_branch(git: Git, url: str, where: Path) -> str:
    """The branch the repository's HEAD names (``git ls-remote --symref``), '' when it names none."""
    try:
        out = (await git.run(["ls-remote", "--symref", "--", url, "HEAD"], where)).stdout.decode("utf-8", "replace")
    except GitFailed as error:
        raise RepoError(_clone_problem(error, url, "")) from None
    for line in out.splitlines():
        if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
            return line.removeprefix("ref: refs/heads/").removesuffix("\tHEAD")
    return ""


async def has_branch(git: Git, url: str, branch: str, where: Path) -> bool:
    """Whether the repository has ``branch`` (``git ls-remote --heads``)."""
    try:
        out = await git.run(["ls-remote", "--heads", "--", url, f"refs/heads/{branch}"], where)
    except GitFailed as error:
        raise RepoError(_clone_problem(error, url, "")) from None
    return bool(out.stdout.strip())


def _no_such_branch(error: GitFailed) -> bool:
    said = error.stderr.lower()
    return "remote branch" in said and "not found" in said


async def _no_branch_at_all(git: Git, url: str, where: Path) -> bool:
    """The repository has no branch at all (``ls-remote --heads`` lists none): it is empty."""
    heads = await git.run(["ls-remote", "--heads", "--", url], where, check=False)
    return heads.code == 0 and not heads.stdout.strip()


def _clone_problem(error: GitFailed, url: str, base: str) -> str:
    said = error.stderr.lower()
    if _no_such_branch(error):
        return f"The repository has no branch {base!r} to start from."
    if any(s in said for s in ("not found", "authentication failed", "could not read username", "403", "401")):
        return ("The repository could not be fetched: it does not exist, or the bot's token cannot read it "
                "(a fine-grained token needs Contents access to it).")
    if "does not appear to be a git repository" in said:  # a local folder's
        return ("The folder is not a git repository: --repo takes the top folder of one (the folder holding "
                ".git).")
    if "dubious ownership" in said:
        return ("The folder belongs to another user, and git refuses to read it (its safe.directory rule); run the "
                "bot as the folder's owner.")
    if "could not resolve host" in said or "failed to connect" in said or "connection refused" in said:
        return f"The git host could not be reached ({str(error).removeprefix('git clone failed: ')})."
    return f"The repository could not be fetched: {str(error).removeprefix('git clone failed: ')}"


async def _head(git: Git, git_dir: Path, url: str) -> str:
    done = await git.run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], git_dir, check=False)
    if done.code == 0:
        return done.stdout.decode().strip()
    heads = await git.run(["ls-remote", "--heads", "--", url], git_dir, check=False)
    if heads.code == 0 and heads.stdout.strip():  # branches, but HEAD names none of them
        raise RepoError("The repository's default branch (its HEAD) is a branch that does not exist: name the branch "
                        "to start from (--base BRANCH, or repo:OWNER/NAME@BRANCH).")
    raise RepoError(_EMPTY)


async def _refuse_a_tag(git: Git, git_dir: Path, base: str) -> None:
    """``clone --branch`` takes a tag too, and leaves the clone's HEAD detached at it rather than on the branch:
    the run's branch and its pull request need a branch to start from and go into."""
    done = await git.run(["symbolic-ref", "--quiet", "HEAD"], git_dir, check=False)
    if done.stdout.decode("utf-8", "replace").strip() != f"refs/heads/{base}":
        raise RepoError(f"The repository has no branch {base!r} to start from: {base!r} is a tag, and a pull "
                        "request goes into a branch.")


async def _branch_of_head(git: Git, git_dir: Path) -> str:
    """The branch the repository's HEAD names; a detached HEAD (a local folder's) names none: said."""
    done = await git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], git_dir, check=False)
    if done.code != 0:
        raise RepoError("The repository's HEAD is on no branch (a detached HEAD): name the branch to start from "
                        "(--base BRANCH, or repo:OWNER/NAME@BRANCH).")
    return done.stdout.decode("utf-8", "replace").strip()


async def _entries(git: Git, git_dir: Path) -> list[tuple[str, str, str]]:
    """(mode, blob id, path) of every entry of HEAD's tree: trees are always fetched, so no blob is asked for."""
    out = (await git.run(["ls-tree", "-r", "-z", "--full-tree", "HEAD"], git_dir)).stdout
    entries = []
    for record in out.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, _kind, oid = meta.decode().split()
            entries.append((mode, oid, path.decode("utf-8", "surrogateescape")))
    return entries


async def _local_blobs(git: Git, git_dir: Path) -> dict[str, int]:
    """Size of each blob this clone holds; ``--batch-all-objects`` lists only what is here (no lazy fetch)."""
    out = (await git.run(["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)",
                          "--batch-all-objects"], git_dir)).stdout.decode()
    sizes = {}
    for line in out.splitlines():
        oid, kind, size = line.split()
        if kind == "blob":
            sizes[oid] = int(size)
    return sizes


def _sort(entries: list[tuple[str, str, str]], checkout: Checkout) -> None:
    """Regular files become ``blobs``; links, submodules and unsafe paths are left out, each with its reason."""
    for mode, oid, path in entries:
        problem = unsafe_path(path)
        if problem:
            checkout.left_out[path] = problem
        elif mode == LINK:
            checkout.left_out[path] = "a link: links are never made from a repository's tree"
        elif mode == SUBMODULE:
            checkout.left_out[path] = "a submodule: submodules are never fetched"
        elif mode not in (REGULAR, EXECUTABLE):
            checkout.left_out[path] = f"an entry of mode {mode}"
        else:
            checkout.blobs[path] = (mode, oid)
        checkout.modes[path] = mode


_BAD_PART = re.compile(r"^(?:\.git|\.\.?|)$", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def unsafe_path(path: str) -> str:
    """Why a tree path may not be written under the folder ('' when it may)."""
    if path.startswith("/") or "\\" in path or "\0" in path:
        return "a path that leaves the repository's folder"
    if not_text(path) or _CONTROL.search(path):  # it would reach prompts, the store and chat, and break them
        return "a name that is not plain text (bytes that are not UTF-8, or control characters)"
    if any(_BAD_PART.match(part.rstrip(". ")) for part in path.split("/")):
        return "a path that leaves the repository's folder or names its .git"
    if posixpath.normpath(path) != path:
        return "a path that is not in its plain form"
    return ""


async def _write_out(git: Git, checkout: Checkout, wanted: list[tuple[str, str, str]], sizes: dict[str, int]) -> None:
    """Write these files, their contents read from git ``READ_BYTES`` at a time (their sizes are known already)."""
    for batch in _batches(wanted, sizes):
        request = "".join(f"{oid}\n" for _, oid, _ in batch).encode()
        out = (await git.run(["cat-file", "--batch"], checkout.git_dir, stdin=request)).stdout
        await asyncio.to_thread(_write_files, out, checkout.tree, batch, checkout)


def _batches(wanted: list[tuple[str, str, str]], sizes: dict[str, int]) -> Iterator[list[tuple[str, str, str]]]:
    batch: list[tuple[str, str, str]] = []
    held = 0
    for entry in wanted:
        if batch and held + sizes[entry[1]] > READ_BYTES:
            yield batch
            batch, held = [], 0
        batch.append(entry)
        held += sizes[entry[1]]
    if batch:
        yield batch


def _write_files(out: bytes, tree: Path, wanted: list[tuple[str, str, str]], checkout: Checkout) -> None:
    at = 0
    root = tree.resolve()
    for mode, oid, path in wanted:
        header_end = out.index(b"\n", at)
        _oid, _kind, size = out[at:header_end].decode().split()
        body = out[header_end + 1: header_end + 1 + int(size)]
        at = header_end + 1 + int(size) + 1
        if len(body) < LFS_POINTER_BYTES and body.startswith(LFS_POINTER):
            checkout.left_out[path] = LFS_FILE
            continue
        target = root / path
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.parent.resolve() != target.parent:
                raise OSError("not a plain folder")  # never: no link is ever made here, but said if it were
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o755 if mode == EXECUTABLE else 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
            os.replace(temporary, target)  # whole or not at all: a fetch beside this one may write it too
        except OSError:
            temporary.unlink(missing_ok=True)
            checkout.left_out[path] = "it clashes with another path of the tree"
            continue
        checkout.files[path] = oid
