"""``FolderPublisher``: the fallback for the terminal, the files and README.md written to a local folder."""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath

from agents.errors import CheckInError
from agents.types import CheckInResult, Publication
from bot.checkin.files import README_NAME, Skipped, folder_layout
from bot.checkin.readme import compose_readme


class FolderPublisher:
    """Writes into ``root`` (created when missing); a follow-up overwrites its own files, never others."""

    def __init__(self, root: str | Path) -> None:
        self._root = Path(root).expanduser()

    async def publish(self, publication: Publication) -> CheckInResult:
        files, skipped = folder_layout(publication.files)
        readme = compose_readme(publication, skipped=skipped)
        # Disk writes block; a slow or network disk must not stall other runs.
        root, refused = await asyncio.to_thread(self._write_all, {**files, PurePosixPath(README_NAME): readme})
        return CheckInResult(location=str(root), kind="folder", note=_note([*skipped, *refused]))

    def _write_all(self, files: dict[PurePosixPath, str]) -> tuple[Path, list[Skipped]]:
        try:
            self._root.mkdir(parents=True, exist_ok=True)
            root = self._root.resolve()
            return root, [s for path, content in files.items() if (s := _write(root, path, content))]
        except OSError as error:
            raise CheckInError(f"Could not write the files to {self._root}: {error.strerror or error}") from None


def _write(root: Path, path: PurePosixPath, content: str) -> Skipped | None:
    """Writes one file, unless a symlink already in the folder would carry it outside ``root``."""
    target = root.joinpath(path)
    if not target.resolve().is_relative_to(root):
        return Skipped(str(path), "the path leads outside the output folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        # surrogateescape writes back the exact bytes of a file that was read as binary.
        data = content.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return Skipped(str(path), "not text that can be saved (invalid characters)")
    target.write_bytes(data)
    return None


def _note(skipped: list[Skipped]) -> str:
    if not skipped:
        return ""
    listed = "; ".join(f"{s.path} ({s.reason})" for s in skipped)
    return f"not written: {listed}"
