"""``codegen-chat eval``: the team against one prompt, on a suite of problems, with the real model and sandbox.

    codegen-chat eval --suite humaneval|TASKS.jsonl [--modes single,team] [--limit N] [--concurrency N]
                      [--out DIR] [--resume]
    codegen-chat eval --report DIR

Everything but the wiring lives in ``bot/eval``: this module checks the request (before any model is
called), builds the model client and the sandbox from the config, and prints the outcome.
Exit status: 0 when every attempt ran, 130 after Ctrl-C (143 after SIGTERM, 129 after SIGHUP), 1 when an outage
stopped it, 2 for bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from adapters.terminal import check_out_dir
from agents.errors import SandboxError
from agents.prompts import PromptBook
from agents.protocols import ChatModel
from agents.types import FileSet, Role
from bot.config.sections import Config, Secrets
from bot.config.settings import Range, number_argument
from bot.eval.attempts import EvalHalted, Parts
from bot.eval.chart import CHART_FILE, PAGE_FILE, write_chart
from bot.eval.harness import run_eval, still_to_run
from bot.eval.modes import DEFAULT_MODES, MODES, Mode, Workflow, parse_modes
from bot.eval.problems import EvalError, Problem
from bot.eval.progress import Progress
from bot.eval.report import build_report
from bot.eval.results import RESULTS_FILE, EvalFolder, EvalMeta
from bot.eval.suites import load_suite
from bot.eval.table import report_text
from bot.runs.service import team_settings
from bot.safety.inert import inert
from bot.safety.redact import Redactor, mask_secrets
from bot.sandbox.languages import registry
from codegen_chat.build import team_model

TEAM_ROLES = (Role.PLANNER, Role.PROGRAMMER, Role.OPTIMIZER, Role.TESTER, Role.MANAGER)
SUPERVISOR_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def register(commands: argparse._SubParsersAction) -> None:
    modes = "\n".join(f"  {mode.name:<16}{mode.about}" for mode in MODES.values())
    command = commands.add_parser("eval", help="measure the team against a single prompt on a suite of problems",
                                  epilog=f"modes:\n{modes}", formatter_class=argparse.RawDescriptionHelpFormatter)
    command.add_argument("--suite", metavar="NAME|FILE", help="humaneval, or a JSONL file of your own tasks")
    command.add_argument("--modes", metavar="M,M", help=f"comma-separated, of: {', '.join(MODES)} "
                                                        f"(default {','.join(DEFAULT_MODES)})")
    command.add_argument("--limit", type=number_argument(int, Range(1, 1_000_000)), metavar="N",
                         help="only the suite's first N problems")
    command.add_argument("--concurrency", type=number_argument(int, Range(1, 64)), default=1, metavar="N",
                         help="attempts at once (default 1)")
    command.add_argument("--out", metavar="DIR", help="where the results go (default ./eval-DATE-TIME)")
    command.add_argument("--resume", action="store_true", help="finish the eval in --out, skipping what is done")
    command.add_argument("--report", metavar="DIR", help="print the report of the eval in DIR (and write its chart)")
    command.set_defaults(handler=_eval)


@dataclasses.dataclass(frozen=True)
class _Plan:
    folder: EvalFolder
    meta: EvalMeta
    problems: tuple[Problem, ...]
    modes: tuple[Mode, ...]
    resuming: bool


async def _eval(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    if args.report:
        if args.suite or args.resume:
            raise EvalError("--report prints an eval that ran; give it alone, with the eval's folder.")
        return await _report(EvalFolder(Path(args.report)))
    plan = await _plan(args, config)
    async with team_model(config, secrets) as (config, model):
        return await _eval_with(plan, config, secrets, model, args.concurrency)


async def _eval_with(plan: _Plan, config: Config, secrets: Secrets, model: ChatModel, concurrency: int) -> int:
    try:
        meta = _with_models(plan, {str(role): model.model_name(role) for role in _roles(plan.modes)})
        from bot.sandbox.on_demand import sandbox_type  # its SDK loaded only by the command that uses it

        async with (await sandbox_type(config.sandbox))(config.sandbox) as sandbox:
            await asyncio.to_thread(plan.folder.write_meta, meta)
            parts = Parts(model, sandbox, PromptBook(languages=registry(config.sandbox)), team_settings(config), config.prices)
            redact = Redactor(secrets.values(), urls=True)
            return await _run(await _masked(plan, redact), meta, parts, concurrency, redact)
    except SandboxError as error:
        raise EvalHalted(f"the sandbox cannot be used: {error}") from None


async def _plan(args: argparse.Namespace, config: Config) -> _Plan:
    """What to run, checked before any model is called: the suite, the modes, the folder."""
    folder = EvalFolder(Path(args.out or time.strftime("eval-%Y%m%d-%H%M%S")))
    await asyncio.to_thread(check_out_dir, folder.path)
    if not config.sandbox.enabled:
        raise EvalError("The eval scores code in the sandbox, which is disabled ([sandbox] enabled = false); "
                        "enable it.")
    earlier = await asyncio.to_thread(folder.read_meta) if args.resume else None
    if earlier is None and await asyncio.to_thread(folder.exists):
        raise EvalError(f"{folder.path} already holds an eval: add --resume to finish it, or choose another --out.")
    in_the_way = [name for name in (RESULTS_FILE, CHART_FILE, PAGE_FILE) if (folder.path / name).exists()]
    if earlier is None and in_the_way:  # files of someone else's: the eval would append to them or write over them
        raise EvalError(f"{folder.path} already holds {', '.join(in_the_way)}, which an eval writes; "
                        "choose another --out (a new or empty folder).")
    suite_name = _same(earlier.suite if earlier else None, args.suite, "--suite")
    if not suite_name:
        raise EvalError("Name a suite: --suite humaneval, or --suite FILE.jsonl with your own tasks.")
    modes = parse_modes(_same(",".join(earlier.modes) if earlier else None, args.modes, "--modes") or
                        ",".join(DEFAULT_MODES))
    limit = earlier.limit if earlier and args.limit is None else args.limit
    if earlier and limit != earlier.limit:
        raise EvalError(f"The eval in {folder.path} began with --limit {earlier.limit}; resume it the same way.")
    suite = await load_suite(suite_name, registry(config.sandbox), config.input, config.sandbox.max_upload_bytes)
    suite = suite.limited(limit)
    ids = tuple(problem.id for problem in suite.problems)
    if earlier and ids != earlier.problems:
        raise EvalError(f"The suite {suite_name} changed since the eval in {folder.path} began (its problems differ); "
                        "resume it with the same suite, or start a new eval with another --out.")
    meta = earlier or EvalMeta(suite.name, tuple(m.name for m in modes), ids, limit,
                               started=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    return _Plan(folder, meta, suite.problems, modes, earlier is not None)


async def _masked(plan: _Plan, known: Redactor) -> _Plan:
    """The plan with secrets in its tasks and starter files masked, as a chat request's are: they reach the
    model's prompts (the hidden tests only score the result, in the sandbox, and stay as written)."""
    def mask() -> tuple[tuple[Problem, ...], int]:
        found, problems = 0, []
        for problem in plan.problems:
            task, in_task = mask_secrets(problem.task, known)
            starter = {}
            for path, text in problem.starter.items():
                starter[path], in_file = mask_secrets(text, known)
                found += in_file
            found += in_task
            problems.append(dataclasses.replace(problem, task=task, starter=FileSet(starter)))
        return tuple(problems), found

    problems, found = await asyncio.to_thread(mask)
    if found:
        print(f"{found} secret{'' if found == 1 else 's'} (tokens or keys) in the suite's tasks and starter files "
              f"{'was' if found == 1 else 'were'} masked before anything was sent on.", file=sys.stderr)
    return dataclasses.replace(plan, problems=problems)


def _same(earlier: str | None, given: str | None, flag: str) -> str | None:
    """The value for a flag: as given, or the resumed eval's; both must agree when both are there."""
    if earlier is not None and given is not None and given.strip() != earlier:
        raise EvalError(f"The eval being resumed ran with {flag} {earlier}; resume it with the same (or leave {flag} out).")
    return given if given is not None else earlier


def _roles(modes: Sequence[Mode]) -> list[Role]:
    roles = {role for mode in modes for role in ((Role.PROGRAMMER,) if mode.workflow is Workflow.SINGLE else TEAM_ROLES)}
    return [role for role in Role if role in roles]


def _with_models(plan: _Plan, models: dict[str, str]) -> EvalMeta:
    """The eval's record of the models it measures; a resumed eval must measure the same ones."""
    if plan.resuming and plan.meta.models and plan.meta.models != models:
        raise EvalError(f"The eval in {plan.folder.path} measured {_models(plan.meta.models)}, and the config now names "
                        f"{_models(models)}; resume it with the same models, or start a new eval with another --out.")
    return dataclasses.replace(plan.meta, models=models)


def _models(models: dict[str, str]) -> str:
    return ", ".join(f"{role}={name}" for role, name in sorted(models.items()))


async def _run(plan: _Plan, meta: EvalMeta, parts: Parts, concurrency: int, redact: Redactor) -> int:
    done = await asyncio.to_thread(plan.folder.read_results)
    units = still_to_run(plan.problems, plan.modes, done)
    total = len(plan.problems) * len(plan.modes)
    print(f"Eval of {inert(meta.suite)}: {len(plan.problems)} problems × {', '.join(meta.modes)}; "
          f"{total - len(units)} of {total} attempts already done. Results: {plan.folder.results_path}",
          file=sys.stderr)
    progress = Progress(sys.stderr, meta.modes, total, [r for r in done if r.key in _keys(plan)], sys.stderr.isatty())
    try:
        with _stopped_as_by_ctrl_c() as stopped_by:
            await run_eval(units, parts, plan.folder, concurrency, progress, redact)
    except asyncio.CancelledError:  # Ctrl-C, SIGTERM or SIGHUP: what finished is on disk
        progress.close()
        await _print_report(plan.folder, meta)
        print(f"codegen-chat: stopped; the results so far are kept. Run the rest with: "
              f"codegen-chat eval --out {inert(str(plan.folder.path))} --resume", file=sys.stderr)
        return 128 + (stopped_by[0] if stopped_by else signal.SIGINT)
    except EvalHalted as halted:
        progress.close()
        await _print_report(plan.folder, meta)
        raise EvalHalted(f"{str(halted).rstrip('.')}. The results so far are kept: fix that, then run "
                         f"codegen-chat eval --out {inert(str(plan.folder.path))} --resume") from None
    progress.close()
    await _print_report(plan.folder, meta)
    return 0


@contextlib.contextmanager
def _stopped_as_by_ctrl_c() -> Iterator[list[signal.Signals]]:
    """SIGTERM and SIGHUP (a supervisor, a closed terminal) stop the eval as Ctrl-C does: the attempts under way are
    cancelled and what finished is kept. Yields the signal that stopped it, once one has; a second one ends the
    process at once."""
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    assert task is not None
    stopped_by: list[signal.Signals] = []

    def stop(number: signal.Signals) -> None:
        stopped_by.append(number)
        for each in SUPERVISOR_SIGNALS:
            loop.remove_signal_handler(each)  # the default again: a second signal is not waited on
        task.cancel()

    for number in SUPERVISOR_SIGNALS:
        loop.add_signal_handler(number, stop, number)
    try:
        yield stopped_by
    finally:
        if not stopped_by:
            for number in SUPERVISOR_SIGNALS:
                loop.remove_signal_handler(number)


def _keys(plan: _Plan) -> set[tuple[str, str]]:
    return {(problem.id, mode.name) for problem in plan.problems for mode in plan.modes}


async def _report(folder: EvalFolder) -> int:
    meta = await asyncio.to_thread(folder.read_meta)
    await _print_report(folder, meta)
    return 0


async def _print_report(folder: EvalFolder, meta: EvalMeta) -> None:
    report = build_report(meta, await asyncio.to_thread(folder.read_results))
    page = await asyncio.to_thread(write_chart, report, folder.path)
    print(report_text(report, chart=str(page)))
