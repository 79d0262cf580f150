"""``codegen-chat sandbox run|build``: the sandbox from the command line, for debugging and CI."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agents.errors import SandboxError
from agents.types import FileSet, TestJob, TestReport
from bot.config.sections import Config, LanguageConfig, SandboxConfig, Secrets, with_flags
from bot.config.settings import argument_for
from bot.safety.inert import inert
from bot.sandbox.folder import read_folder, shown
from bot.sandbox.languages import language_of, languages, use_offline, with_offline
from bot.sandbox.on_demand import sandbox_type

if TYPE_CHECKING:
    import docker

# The commands below import the Docker SDK (through bot.sandbox.client, .images and .sandbox) when they run:
# registering them must not make every other command wait for it.

BUILD_TIMEOUT_S = 1800.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sandbox = subparsers.add_parser("sandbox", help="run tests in the sandbox, or prepare its images")
    commands = sandbox.add_subparsers(dest="sandbox_command", required=True)

    run = commands.add_parser("run", help="run a language's test command over the files in DIR")
    run.add_argument("dir", metavar="DIR", help="folder holding the code and its tests")
    run.add_argument("--language", required=True, help="python, javascript, go, rust, java, c, cpp, bash...")
    run.add_argument("--timeout", type=argument_for(SandboxConfig, "timeout_s"), metavar="SECONDS",
                     help="wall-clock limit of the tests")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    run.add_argument("--offline", action="store_true", help="use the offline-built images")
    run.set_defaults(handler=run_command)

    build = commands.add_parser("build", help="pull (or build offline) the language images")
    build.add_argument("--offline", action="store_true", help="build from Debian packages, no registry")
    build.add_argument("--language", action="append", dest="languages", metavar="L",
                       help="only this language (repeatable); default: all configured")
    build.set_defaults(handler=build_command)


async def run_command(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    """Exit 0 only when the tests passed; 1 when they did not; 2 when they could not run at all."""
    del secrets  # never handed to the sandbox
    sandbox_config = _chosen(config.sandbox, args.offline)
    if args.timeout:  # --timeout replaces the configured limit, longer or shorter
        sandbox_config = with_flags(sandbox_config, **{"--timeout": ("timeout_s", args.timeout)})
    try:
        language_of(args.language, languages(sandbox_config))  # before a folder is read for a job that cannot run
        files = await asyncio.to_thread(read_dir, Path(args.dir), sandbox_config.max_upload_bytes)
        async with (await sandbox_type(sandbox_config))(sandbox_config) as sandbox:
            report = await sandbox.run(TestJob(args.language, files))
    except SandboxError as error:
        print(f"codegen-chat: {inert(str(error))}", file=sys.stderr)
        return 2
    print(json.dumps(report_json(report)) if args.json else report_text(report))
    return 0 if report.ok else 1


async def build_command(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    del secrets
    from bot.sandbox.client import ENGINE_ERRORS, engine_failed, open_checked
    from bot.sandbox.containers import reap_orphans
    from bot.sandbox.images import RegistryUnreachable, prepare_online

    sandbox_config = _chosen(config.sandbox, args.offline)
    table = languages(sandbox_config)
    wanted = args.languages or sorted(table)
    unknown = [name for name in wanted if name not in table]
    if unknown:
        print(inert(f"codegen-chat: unknown language(s): {', '.join(unknown)} (known: {', '.join(sorted(table))})"),
              file=sys.stderr)
        return 2
    chosen = [(name, table[name]) for name in wanted]
    try:
        client = await open_checked(sandbox_config, BUILD_TIMEOUT_S)
        await asyncio.to_thread(reap_orphans, client)  # what an earlier process left, as every engine command does
        if use_offline(sandbox_config):
            await _build_offline(client, sandbox_config, chosen)
        else:
            for index, (name, language) in enumerate(chosen):
                try:
                    await asyncio.to_thread(prepare_online, client, name, language, _log)
                except RegistryUnreachable as error:
                    _log(f"{error}: building the offline images from Debian packages instead (used "
                         "automatically when the registry's are missing)")
                    await _build_offline(client, with_offline(sandbox_config), chosen[index:])
                    break
    except SandboxError as error:
        print(f"codegen-chat: {inert(str(error))}", file=sys.stderr)
        return 2
    except ENGINE_ERRORS as error:
        print(f"codegen-chat: {engine_failed(error, 'the build')}", file=sys.stderr)
        return 2
    return 0


async def _build_offline(client: docker.DockerClient, config: SandboxConfig,
                         chosen: list[tuple[str, LanguageConfig]]) -> None:
    from bot.sandbox.images import build_offline

    spent = await asyncio.to_thread(build_offline, client, config, chosen, _log)
    for image, seconds in spent.items():
        _log(f"built {image} in {seconds:.1f}s")


def read_dir(root: Path, max_bytes: int) -> FileSet:
    """The folder's regular text files (``bot.sandbox.folder``), each one left out named on stderr."""
    read = read_folder(root, max_bytes)
    for path, why in read.skipped:
        print(f"codegen-chat: skipped {shown(path)}: {why}", file=sys.stderr)
    return read.fileset()


def report_json(report: TestReport) -> dict[str, object]:
    return {"status": str(report.status), "exit_code": report.exit_code, "duration_s": report.duration_s,
            "passed": report.passed, "failed": report.failed, "stdout": report.stdout,
            "stderr": report.stderr, "truncated": report.truncated}


def report_text(report: TestReport) -> str:
    """The tests' output for a terminal: what the code under test printed is shown, never acted on (escape
    sequences, carriage returns and bidi controls made inert, as ``run`` and ``history`` show them)."""
    return inert(f"{report.output(limit=20_000)}\n\n{report.summary()} ({report.duration_s:.1f}s)")


def _chosen(config: SandboxConfig, offline: bool) -> SandboxConfig:
    return with_offline(config) if offline else config


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
