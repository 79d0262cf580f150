"""``RepoWorkspace``: a fetched repository as the team's workspace (``agents.protocols.Workspace``).

The team reads the map and whole files from the folder ``bot.repos.checkout`` writes: the files it names are
fetched as it asks for them, and the rest of the tree in the background (``everything`` waits for it: the
test runs need it, the first prompts do not). Its changes become
commits on the run's own branch, made from blobs and trees directly (``hash-object --no-filters``,
``update-index``, ``commit-tree``), so git's work-tree machinery, and whatever the repository configures
for it, never runs. ``bot.repos.pushing`` pushes that branch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path

from agents.errors import WorkspaceError
from agents.language import BUILT_IN
from agents.repository import is_test_data
from agents.types import FileSet, RepoTests
from bot.repos.checkout import EXECUTABLE, REGULAR, Checkout, Limits, fetch_files, fetch_rest, unsafe_path
from bot.repos.errors import RepoError
from bot.repos.file_style import in_style_of
from bot.repos.git import Git
from bot.repos.map import map_candidates, repository_map

TEXT_SNIFF = 8192


class RepoWorkspace:
    def __init__(self, name: str, git: Git, checkout: Checkout, tests: RepoTests, map_chars: int,
                 limits: Limits, branch: str, co_author: str = "", mask: Callable[[str], str] = str) -> None:
        self.name = name
        self.git = git
        self.checkout = checkout
        self.branch = branch  # the run's own branch: its commits go there
        self.head = checkout.head  # the newest commit of the run's branch (the base's head until a commit)
        self.commits: list[str] = []  # made by this run, oldest first
        self._tests, self._map_chars, self._limits = tests, map_chars, limits
        self._max_file_bytes = limits.max_file_bytes
        self._co_author = co_author
        self._mask = mask  # the bot's secrets masked in whatever is committed (and so pushed), as in any check-in
        self._map: str | None = None
        self._text_cache: dict[str, str | None] = {}
        self._committed: dict[str, str] = {}  # path -> content as last committed by this run
        self._lock = asyncio.Lock()  # one commit at a time
        # Named files are fetched one request at a time, beside the background fetch of the rest (git writes
        # each fetch's objects apart, and each file is written whole by a rename), so a read never waits for it.
        self._fetching = asyncio.Lock()
        self._rest: asyncio.Task[None] | None = None
        self._tree: FileSet | None = None

    async def prepare(self, named: list[str]) -> None:
        """Fetch what the first prompts show (the map's files, the ones ``named``), build the map, and start
        fetching the rest of the tree in the background."""
        await self._fetch([*map_candidates(self.checkout.paths, self._map_chars), *named])
        self.map()
        self._rest = asyncio.ensure_future(self._fetch_rest())

    async def close(self) -> None:
        if self._rest is not None and not self._rest.done():
            self._rest.cancel()
            await asyncio.gather(self._rest, return_exceptions=True)

    async def _fetch(self, paths: list[str]) -> None:
        if all(p in self.checkout.files for p in paths if p in self.checkout.blobs):
            return  # written already: no need to wait for a fetch under way
        async with self._fetching:
            await fetch_files(self.git, self.checkout, paths, self._limits)

    async def _fetch_rest(self) -> None:
        await fetch_rest(self.git, self.checkout, self._limits)

    # -- reading ---------------------------------------------------------------------------------

    def map(self) -> str:
        if self._map is None:
            self._map = repository_map(self.checkout.paths, self._text, self._map_chars)
        return self._map

    def paths(self) -> frozenset[str]:
        return frozenset(self.checkout.blobs)

    def existing_tests(self) -> frozenset[str]:
        """The tree's files named as tests are, and the data beside them that the tests check against."""
        return frozenset(p for p in self.checkout.blobs if BUILT_IN.looks_like_test(p) or is_test_data(p))

    def tests(self) -> RepoTests:
        return self._tests

    async def read(self, paths: Iterable[str]) -> FileSet:
        wanted = [p for p in dict.fromkeys(paths) if p in self.checkout.blobs]
        try:
            await self._fetch(wanted)
        except RepoError as error:
            raise WorkspaceError(str(error)) from None
        return await self._texts(wanted)

    async def everything(self) -> FileSet:
        """Every text file of the tree, for the sandbox (binary files stay out: the job carries text); waits
        for the background fetch. ``WorkspaceError`` with its sentence when the tree cannot be had."""
        if self._tree is None:
            try:
                if self._rest is None:
                    await self._fetch_rest()
                else:
                    await asyncio.shield(self._rest)
            except RepoError as error:
                raise WorkspaceError(str(error)) from None
            self._tree = await self._texts(sorted(self.checkout.files))
        return self._tree

    async def _texts(self, paths: list[str]) -> FileSet:
        texts = await asyncio.to_thread(lambda: {p: self._text(p) for p in paths})
        return FileSet({p: t for p, t in texts.items() if t is not None})

    def original(self, path: str) -> str | None:
        return self._text(path)

    def _text(self, path: str) -> str | None:
        """The file's text as fetched; None for a binary or too large file, or one not (yet) fetched."""
        if path in self._text_cache:
            return self._text_cache[path]
        if path not in self.checkout.files:
            return None  # not fetched yet: not cached, a later read may have it
        text = None
        if path in self.checkout.files:
            try:
                data = (self.checkout.tree / path).read_bytes()
            except OSError:
                data = None
            if data is not None and len(data) <= self._max_file_bytes and b"\0" not in data[:TEXT_SNIFF]:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    text = None
        self._text_cache[path] = text
        return text

    # -- writing ---------------------------------------------------------------------------------

    def unwritable(self, paths: Iterable[str]) -> dict[str, str]:
        """The paths a file may not be written at in this repository, each with why: one that leaves the tree or
        names its .git, one that would take the place of a folder, a link or a submodule of the tree, or a file of
        the tree the team cannot have as text (binary, too large, Git LFS): a rewrite would replace what it never saw."""
        return {path: why for path in paths
                if (why := unsafe_path(path) or self.checkout.clash(path) or self._not_text(path))}

    def _not_text(self, path: str) -> str:
        """Why a file of the tree is not the team's to rewrite ('' when it is, or is not fetched yet)."""
        if path in self.checkout.blobs and path in self.checkout.left_out:
            return f"not read by the bot: {self.checkout.left_out[path]}; it stays as the repository has it"
        if path in self.checkout.files and self._text(path) is None:
            return "not read by the bot: binary, or not UTF-8 text; it stays as the repository has it"
        return ""

    def changed(self, files: FileSet) -> dict[str, str]:
        """The files that differ from the fetched tree (new files included), each existing one in the shape the
        tree stores it in (``bot.repos.file_style``): a rewrite that changes only its line endings changes nothing."""
        styled = {p: self._styled(p, c) for p, c in files.items()}
        return {p: c for p, c in styled.items() if self._text(p) != c}

    def _styled(self, path: str, content: str) -> str:
        original = self._text(path)
        return content if original is None else in_style_of(original, content)

    async def commit(self, files: FileSet, message: str) -> str | None:
        """One commit on the run's branch holding every file that differs from what this run last committed
        (the fetched tree, at first); None when nothing does."""
        files = FileSet({path: self._mask(content) for path, content in files.items()})
        message = self._mask(message)
        async with self._lock:
            changes = {p: c for p, c in self.changed(files).items() if self._committed.get(p) != c}
            if not changes:
                return None
            if refused := self.unwritable(changes):  # the team's writes are checked before; this is the last word
                raise RepoError("; ".join(f"{path}: {why}" for path, why in refused.items()) + "; nothing was committed.")
            commit = await self._commit(changes, message)
            self._committed.update(changes)
            self.head = commit
            self.commits.append(commit)
            return commit

    async def _commit(self, changes: dict[str, str], message: str) -> str:
        git_dir = self.checkout.git_dir
        index = {"GIT_INDEX_FILE": str(git_dir / "codegen-index")}
        await self.git.run(["read-tree", self.head], git_dir, env=index)
        entries = []
        for path, content in changes.items():
            oid = (await self.git.run(["hash-object", "-w", "--no-filters", "--stdin"], git_dir,
                                      stdin=content.encode())).stdout.decode().strip()
            mode = self.checkout.modes.get(path, REGULAR)
            entries.append(f"{mode if mode in (REGULAR, EXECUTABLE) else REGULAR} {oid}\t{path}\n")
        await self.git.run(["update-index", "--index-info"], git_dir, stdin="".join(entries).encode(), env=index)
        tree = (await self.git.run(["write-tree"], git_dir, env=index)).stdout.decode().strip()
        text = message + (f"\n\nCo-authored-by: {self._co_author}" if self._co_author else "") + "\n"
        commit = (await self.git.run(["commit-tree", tree, "-p", self.head, "-F", "-"], git_dir,
                                     stdin=text.encode())).stdout.decode().strip()
        return commit

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def tree(self) -> Path:
        return self.checkout.tree
