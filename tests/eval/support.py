"""Running an eval in-process, the way ``codegen-chat eval`` wires it, against the scripted model server."""

from __future__ import annotations

import io
from pathlib import Path

from agents.prompts import PromptBook
from bot.config.sections import Config, Secrets
from bot.eval.attempts import Parts
from bot.eval.harness import run_eval, still_to_run
from bot.eval.modes import parse_modes
from bot.eval.progress import Progress
from bot.eval.report import Report, build_report
from bot.eval.results import EvalFolder, EvalMeta
from bot.eval.suites import load_suite
from bot.model.client import OpenAIChatModel
from bot.runs.service import team_settings
from bot.sandbox import DockerSandbox
from bot.sandbox.languages import registry
from tests.docker_support import TEST_CONFIG


async def run_suite(config: Config, secrets: Secrets, suite: Path, modes: str, out: Path,
                    concurrency: int = 4) -> tuple[Report, str]:
    """The eval's report and its progress lines."""
    loaded = await load_suite(str(suite), registry(TEST_CONFIG))
    chosen = parse_modes(modes)
    folder = EvalFolder(out)
    meta = EvalMeta(loaded.name, tuple(m.name for m in chosen), tuple(p.id for p in loaded.problems))
    folder.write_meta(meta)
    model = OpenAIChatModel(config, secrets)
    lines = io.StringIO()
    try:
        async with DockerSandbox(TEST_CONFIG) as sandbox:
            parts = Parts(model, sandbox, PromptBook(), team_settings(config), config.prices)
            units = still_to_run(loaded.problems, chosen, folder.read_results())
            progress = Progress(lines, meta.modes, len(units), [], live=False)
            await run_eval(units, parts, folder, concurrency, progress)
    finally:
        await model.close()
    return build_report(meta, folder.read_results()), lines.getvalue()
