"""What a built-in language's dependency setup may be asked to install: packages from the registries, by
name and version, and nothing else.

The setup runs before the tests, on the setup network when there is one, so it must not build or run
anything the team wrote: a local path, an editable install, a ``file:`` or VCS reference, an archive in
the work dir, an index or registry of the files' own choosing, a project-level config of the package
manager, or (npm) a lifecycle script. Each is refused before anything runs, naming the file and line.
The setup commands themselves keep to that too (``npm install --ignore-scripts``); ``cargo fetch`` and
``go mod download`` only download, and run no build script.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Mapping
from typing import Any

REGISTRY_ONLY = "the dependency setup installs only packages from the registries, by name and version"

# A PEP 508 requirement by name: extras, version specifiers, an environment marker, hashes. No URL, no path.
_PIP_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(?:\[[A-Za-z0-9._,\s-]*\])?\s*"
                       r"(?:(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*"
                       r"(?:,\s*(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*)*)?"
                       r"(?:;[^@]*)?$")
_PIP_HASH = re.compile(r"\s+--hash[= ]\S+")
_ARCHIVE = re.compile(r"\.(?:whl|zip|tar|tgz|tar\.gz|tar\.bz2|tar\.xz|egg)\b", re.I)
# npm: a version or range, a dist-tag, or an alias of a registry package (npm:name@range).
_NPM_RANGE = re.compile(r"^(?:npm:(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*(?:@[\w.^~<>=| *-]*)?|[\w.^~<>=| *+-]*)$",
                        re.I)
_NPM_DEPENDENCIES = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_NPM_LOCAL = ("workspaces", "bundleDependencies", "bundledDependencies", "overrides")


def refusal(files: Mapping[str, str], setup_when: tuple[str, ...]) -> str:
    """Why the files that drive this language's setup (``setup_when``, and the files the same tool reads
    with them) ask for something other than registry packages, or ''."""
    read = {name for wanted in setup_when for name in _READ_WITH.get(wanted, (wanted,))}
    for path in sorted(files):
        name = path.rsplit("/", 1)[-1]
        if ".cargo" in read and ".cargo" in path.split("/")[:-1]:
            return f"{path}: a cargo configuration in the files can replace the registry; remove the .cargo folder"
        check = _CHECKS.get(name) if name in read else None
        if check is not None and (why := check(files[path])):
            return f"{path}: {why}; {REGISTRY_ONLY}"
    return ""


def _requirements(text: str) -> str:
    for number, line in enumerate(text.replace("\\\n", " ").splitlines(), start=1):
        requirement = _PIP_HASH.sub("", line.split(" #", 1)[0]).strip()
        if not requirement or requirement.startswith("#"):
            continue
        if requirement.startswith("-"):
            return f"line {number}: the option {requirement.split()[0]!r} is not allowed (no local, editable or " \
                   "other-index installs, no further requirement files)"
        if _ARCHIVE.search(requirement) or not _PIP_NAME.match(requirement):
            return f"line {number}: {requirement[:80]!r} is not a package name with a version"
    return ""


def _package_json(text: str) -> str:
    try:
        manifest = json.loads(text)
    except ValueError:
        return ""  # npm itself says what is wrong with it
    if not isinstance(manifest, dict):
        return ""
    for key in _NPM_LOCAL:
        if key in manifest:
            return f"{key!r} is not allowed (it installs packages from the files)"
    for key in _NPM_DEPENDENCIES:
        table: Any = manifest.get(key) or {}
        if not isinstance(table, dict):
            continue
        for name, spec in table.items():
            if not isinstance(spec, str) or not _NPM_RANGE.match(spec.strip()) or "/" in spec.split("@")[0]:
                return f"{key}.{name} = {str(spec)[:80]!r} is not a registry version (no file:, link:, git or URL)"
    return ""


def _npmrc(_text: str) -> str:
    return "a project .npmrc can point npm at another registry or turn scripts back on; remove it"


def _cargo_toml(text: str) -> str:
    try:
        manifest = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return ""  # cargo itself says what is wrong with it
    for key in ("patch", "replace"):
        if manifest.get(key):
            return f"[{key}] is not allowed (it replaces registry crates)"
    for table_name, table in _cargo_dependency_tables(manifest):
        for name, spec in table.items():
            if isinstance(spec, dict) and (keys := sorted({"git", "registry", "registry-index"} & set(spec))):
                return f"{table_name}.{name} uses {keys[0]} (only crates.io)"
    return ""


def _cargo_dependency_tables(manifest: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    tables = [(key, manifest.get(key)) for key in ("dependencies", "dev-dependencies", "build-dependencies")]
    for target, body in (manifest.get("target") or {}).items():
        if isinstance(body, dict):
            tables += [(f"target.{target}.{key}", body.get(key)) for key in ("dependencies", "dev-dependencies",
                                                                             "build-dependencies")]
    workspace = manifest.get("workspace") or {}
    if isinstance(workspace, dict):
        tables.append(("workspace.dependencies", workspace.get("dependencies")))
    return [(name, table) for name, table in tables if isinstance(table, dict)]


_READ_WITH = {"package.json": ("package.json", ".npmrc"), "Cargo.lock": ("Cargo.toml", ".cargo")}
_CHECKS: dict[str, Callable[[str], str]] = {
    "requirements.txt": _requirements, "package.json": _package_json, ".npmrc": _npmrc, "Cargo.toml": _cargo_toml,
}
