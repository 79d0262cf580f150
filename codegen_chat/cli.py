"""The ``codegen-chat`` command.

    codegen-chat run "TASK"|- [--file PATH]... [--out DIR] [--continue RUN_ID] [--repo OWNER/NAME|URL|PATH [--base BRANCH]]
    codegen-chat history [RUN_ID] [--limit N]
    codegen-chat doctor
    codegen-chat sandbox run|build ...
    codegen-chat serve
    codegen-chat health [--alive]
    codegen-chat web [--host HOST] [--port PORT]
    codegen-chat eval --suite humaneval|TASKS.jsonl [--modes single,team] ... | --report DIR
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import signal
import socket
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO, cast

from adapters.terminal import PLATFORM, TerminalRun, exit_codes, print_run, print_runs, run_in_terminal
from adapters.terminal.json_lines import unstarted_result
from adapters.terminal.run import STDIN_TASK, read_task
from agents.errors import CodegenError, UserInputError
from agents.types import RunStatus
from bot.checkin import FolderPublisher
from bot.config.sections import Config, ConfigError, Secrets, find_config_path, load_config
from bot.config.settings import Range, SettingsError, number_argument
from bot.health.doctor import model_checks, run_doctor
from bot.process.lifecycle import SHUTDOWN_REASON, signals_handled, until_shutdown
from bot.process.logs import configure_logging
from bot.runs.runner import STOPPED_REASON
from bot.runs.service import new_run_id
from bot.safety.inert import inert
from bot.safety.redact import Redactor, install_log_redaction
from bot.safety.text import not_text
from bot.sandbox.commands import register as register_sandbox
from bot.store import owners
from bot.store.doctor import store_checks
from bot.store.migrations import LATEST
from bot.store.open import migrate_store, store_location
from codegen_chat import eval_command, health, serve, web
from codegen_chat.build import open_store, running_service
from codegen_chat.output import SteadyOutput
from codegen_chat.platforms import chat_checks

log = logging.getLogger("codegen")


def _settle_heap() -> None:
    """Leave what start-up made (modules, classes, the SDK's and the config's objects) out of the cyclic garbage
    collector's passes from now on: they live as long as the process, and scanning them again on every older
    generation's collection was a third of a one-off run's CPU per model call. Once per process."""
    if not gc.get_freeze_count():
        gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    _never_fail_on_output()
    shown, told = sys.stdout, sys.stderr
    # `| head`, a closed or full stdout or stderr: the work goes on (and a closed stderr's lines stay off stdout,
    # where print() would otherwise put them).
    sys.stdout, sys.stderr = cast(TextIO, SteadyOutput(shown)), cast(TextIO, SteadyOutput(told))
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = shown, told


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CommandLineRefused as wrong:
        if "run" in argv and "--json" in argv:  # a pipeline reads its result line even when the line was wrong
            print(json.dumps(unstarted_result(exit_codes.BAD_INPUT, wrong.message), ensure_ascii=False))
        return exit_codes.BAD_INPUT
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    redact = Redactor((), urls=True)  # for the one error line
    try:
        refused = argument_problem(argv)  # before anything reads a task, a file name or a run id
        if refused:
            raise UserInputError(refused)
        secrets = Secrets.from_env()
        redact = Redactor(secrets.values(), urls=True)
        configure_logging(secrets.values())
        config = load_config(find_config_path(args.config))
        secrets = secrets.for_config(config)
        redact = Redactor(secrets.values(), urls=True)
        install_log_redaction(secrets.values())
        if args.handler is _run and args.task == STDIN_TASK:
            # Read here, before the event loop: Ctrl-C while nothing has been piped yet must end the read at once.
            args.task = read_task(getattr(sys.stdin, "buffer", None), config.input.max_task_chars)
        _settle_heap()
        return asyncio.run(args.handler(args, config, secrets))
    except (CodegenError, SettingsError) as error:  # SettingsError: a command-line value a config section refused
        message = redact(str(error))
        print(f"codegen-chat: {inert(message)}", file=sys.stderr)
        # `run` has its own documented codes (adapters/terminal/exit_codes.py); other commands fail with 1.
        broke = exit_codes.BROKE if args.handler is _run else 1
        code = exit_codes.BAD_INPUT if isinstance(error, UserInputError | ConfigError | SettingsError) else broke
        if getattr(args, "json_lines", False):  # a pipeline reads its result line even when nothing ran
            print(json.dumps(unstarted_result(code, message), ensure_ascii=False))
        return code
    except KeyboardInterrupt:  # before the run started (reading a piped task, opening the store)
        print("codegen-chat: stopped", file=sys.stderr)
        if getattr(args, "json_lines", False):  # a pipeline reads its result line however the command ends
            print(json.dumps(unstarted_result(exit_codes.CTRL_C, "stopped before the run started", "stopped")))
        return exit_codes.CTRL_C


def argument_problem(argv: Sequence[str]) -> str:
    """The sentence refusing a command line that is not UTF-8 text (a task, a file name), before anything
    reads it; empty when every argument is text."""
    for number, argument in enumerate(argv, start=1):
        problem = not_text(argument, from_bytes=True)
        if problem:
            shown = inert(argument.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            return f"argument {number} ({shown}) is not UTF-8 text: {problem}; write it in UTF-8"
    return ""


def _never_fail_on_output() -> None:
    """A terminal whose encoding cannot show a character gets it escaped rather than a traceback."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


class CommandLineRefused(Exception):
    """A command line the parser refused, after it printed the usage and the reason, as argparse does."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CommandLine(argparse.ArgumentParser):
    """argparse's parser (its subcommands' too), whose refusal the caller can still answer (``run --json``)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise CommandLineRefused(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = CommandLine(
        prog="codegen-chat", description="A team of LLM agents that writes code, tests it in Docker and checks it in."
    )
    parser.add_argument("--config", metavar="PATH", help="config file (default: $CODEGEN_CONFIG or ./config.toml)")
    # Its parsers are CommandLine's too (argparse makes them of the parent's class); typed as the modules expect.
    commands = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
                    parser.add_subparsers(title="commands", metavar="COMMAND"))

    run = commands.add_parser("run", help="run the team on a task in this terminal")
    run.add_argument("task", help="what the code should do; - reads it from standard input")
    run.add_argument("--file", action="append", default=[], metavar="PATH", help="attach a text file (repeatable)")
    run.add_argument("--out", metavar="DIR", help="where the final files go (default: ./codegen-RUN_ID)")
    run.add_argument("--continue", dest="continue_run", metavar="RUN_ID", help="follow up on an earlier run")
    run.add_argument("--json", dest="json_lines", action="store_true",
                     help="print events and the result as JSON lines (one object per line), for pipelines")
    run.add_argument("--repo", metavar="OWNER/NAME|URL|PATH", default="",
                     help="work in this repository (allow-listed in [repos]) or local git folder; check in as a PR")
    run.add_argument("--base", metavar="BRANCH", default="", help="the branch to start from (default: the repo's)")
    run.set_defaults(handler=_run)

    history = commands.add_parser("history", help="list runs, or show one run's transcript")
    history.add_argument("run_id", nargs="?", help="show this run's transcript")
    history.add_argument("--limit", type=number_argument(int, Range(1, 100_000)), default=20,
                         help="how many runs to list (default 20)")
    history.set_defaults(handler=_history)

    store = commands.add_parser("store", help="look after the store: `store migrate` brings its schema up to date")
    store_commands = store.add_subparsers(title="store commands", metavar="COMMAND", required=True)
    migrate = store_commands.add_parser("migrate", help="apply the schema migrations the database lacks (PostgreSQL;"
                                        " SQLite migrates its file at every open)")
    migrate.set_defaults(handler=_store_migrate)

    doctor = commands.add_parser("doctor", help="check the config, the model endpoint, Docker and tokens")
    doctor.set_defaults(handler=_doctor)

    register_sandbox(commands)
    serve.register(commands)
    health.register(commands)
    web.register(commands)
    eval_command.register(commands)
    return parser


async def _run(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    store = await open_store(config)
    try:
        thread_key = f"session-{new_run_id()}"
        if args.continue_run:
            where = await store.conversation_of(args.continue_run)
            if where is None:
                raise UserInputError(f"No run {args.continue_run} in {store_location(config)}: see `codegen-chat history`.")
            if where[0] != PLATFORM:
                raise UserInputError(f"Run {args.continue_run} lives in {where[0]}; continue it there.")
            thread_key = where[1]
            # Runs a process of this host that died left running were marked interrupted when the store opened: one
            # still running here is another terminal's, whose files this follow-up would not start from. Whether a
            # run another host left running (a container since removed, a shared home folder) still runs cannot be
            # told from here: it does not hold the follow-up up.
            host = socket.gethostname()
            under_way = [r.id for r in await store.conversation_runs(PLATFORM, thread_key)
                         if r.status == RunStatus.RUNNING and owners.on_host(r.owner, host)]
            if under_way:
                raise UserInputError(f"Run {under_way[-1]} of that conversation is still under way (in another "
                                     "terminal): let it end, or stop it there, then continue it.")
        await _check_repository(args, config)
        request = TerminalRun(args.task, args.file, args.out, args.continue_run, args.json_lines, args.repo, args.base)

        with signals_handled(config.runtime.shutdown_grace_s) as shutdown:
            async with running_service(config, secrets, store, sandbox_first=False) as service:
                async def wind_down(signal_: signal.Signals) -> None:
                    # Ctrl-C is the person at the terminal stopping their run; SIGTERM/SIGHUP, the machine's.
                    reason = STOPPED_REASON if signal_ is signal.SIGINT else SHUTDOWN_REASON
                    await service.shutdown(reason, config.runtime.shutdown_grace_s)

                work = run_in_terminal(service, request, FolderPublisher, config.input.max_attachment_bytes,
                                       thread_key, redact=Redactor(secrets.values()))
                status = await until_shutdown(shutdown, work, wind_down, ends_by_itself=True)
            if shutdown.signal in (signal.SIGTERM, signal.SIGHUP):
                return 0  # shut down as asked; the run is saved as stopped and `--continue` picks it up
            return exit_codes.CTRL_C if status is None else status
    finally:
        await store.close()


async def _check_repository(args: argparse.Namespace, config: Config) -> None:
    """``--base`` goes with ``--repo``; a local folder given there is a git repository with that branch. Refused
    before the run starts, and nothing is recorded, in one sentence."""
    if args.base and not args.repo:
        raise UserInputError(f"--base {args.base} names the branch of the repository in --repo, and there is none: "
                             "add --repo OWNER/NAME|URL|PATH, or write repo:OWNER/NAME@BRANCH in the task.")
    if not args.repo:
        return
    from bot.repos.desk import check_folder  # the repository modules, only for a run that names one
    from bot.repos.names import from_argument

    named = from_argument(args.repo, args.base, config.repos.git_url)
    if named.path and config.repos.local_paths:
        await check_folder(named, config.repos)


async def _store_migrate(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    applied = await migrate_store(config)
    where = store_location(config)
    for step in applied:
        print(f"applied migration {step.version}: {step.description}")
    print(f"{where} is up to date (schema migration {LATEST})" if config.storage.url else f"{where} is up to date")
    return 0


async def _history(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    redact = Redactor(secrets.values())
    store = await open_store(config)
    try:
        if args.run_id:
            record = await store.run(args.run_id)
            if record is None:
                print(f"codegen-chat: no run {inert(args.run_id)} in {store_location(config)}", file=sys.stderr)
                return 1
            print_run(record, redact=redact)
        else:
            print_runs(await store.runs(args.limit), store_location(config), redact=redact)
        return 0
    finally:
        await store.close()


async def _doctor(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    # Imported here: these checks load the Docker SDK and PyGithub, which no other command needs at its start.
    from bot.checkin import checkin_checks
    from bot.ci.doctor import ci_checks
    from bot.repos.doctor import repo_checks
    from bot.sandbox import sandbox_checks

    return await run_doctor(config, secrets, [model_checks, store_checks, sandbox_checks, checkin_checks,
                                              repo_checks, ci_checks, chat_checks])


if __name__ == "__main__":
    raise SystemExit(main())
