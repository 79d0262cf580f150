"""What the endpoint or the sandbox does wrong is not the model's score: an outage stops the eval with a
sentence and records nothing for that attempt (``--resume`` runs it again); a prompt too long for the model
is the model's own failure and is recorded."""

import io

import pytest

from agents.errors import SandboxError
from agents.language import BUILT_IN
from agents.prompts import PromptBook
from bot.eval.attempts import EvalHalted, Parts
from bot.eval.harness import run_eval, still_to_run
from bot.eval.jsonl_suite import read_jsonl_suite
from bot.eval.modes import parse_modes
from bot.eval.progress import Progress
from bot.eval.results import EvalFolder
from bot.model.client import OpenAIChatModel
from bot.runs.service import team_settings
from tests.conftest import with_changes
from tests.eval.scripted import ContentSandbox, Kind, ScriptedTeam, Spec, write_suite
from tests.fakes.openai_server import FakeOpenAI, error

SPECS = [Spec(1, Kind.ONE_SHOT), Spec(2, Kind.AFTER_FAILURE)]


class BrokenEngine(ContentSandbox):
    """The Docker engine going away: every run raises what the real sandbox raises then."""

    async def run(self, job):
        self.jobs += 1
        raise SandboxError("the Docker engine failed during the test run (connection refused); "
                           "`codegen-chat doctor` checks the engine")


async def evaluate(tmp_path, config, secrets, modes, sandbox):
    suite = read_jsonl_suite(write_suite(tmp_path / "tasks.jsonl", SPECS), BUILT_IN)
    folder = EvalFolder(tmp_path / "out")
    folder.path.mkdir()
    model = OpenAIChatModel(config, secrets)
    chosen = parse_modes(modes)
    units = still_to_run(suite.problems, chosen, [])
    try:
        parts = Parts(model, sandbox, PromptBook(), team_settings(config), {})
        await run_eval(units, parts, folder, 1, Progress(io.StringIO(), [m.name for m in chosen], len(units), [], False))
    finally:
        await model.close()
    return folder.read_results()


@pytest.mark.parametrize("modes", ["single", "team"])
async def test_an_endpoint_that_keeps_failing_stops_the_eval_and_records_nothing(tmp_path, model_server, config,
                                                                                secrets, modes):
    model_server.responder = lambda recorded: error(503, "overloaded")
    with pytest.raises(EvalHalted, match=r"python-1-one-shot \((single|team)\) could not be attempted: The model "
                                         r"endpoint kept failing for the (programmer|planner) \(HTTP 503"):
        await evaluate(tmp_path, config, secrets, modes, ContentSandbox())
    assert EvalFolder(tmp_path / "out").read_results() == []


@pytest.mark.parametrize("modes", ["single", "team"])
async def test_a_sandbox_that_cannot_run_stops_the_eval_and_records_nothing(tmp_path, model_server, config,
                                                                           secrets, modes):
    ScriptedTeam(SPECS).install(model_server)
    with pytest.raises(EvalHalted, match="the Docker engine failed during the test run"):
        await evaluate(tmp_path, config, secrets, modes, BrokenEngine())
    assert EvalFolder(tmp_path / "out").read_results() == []


async def test_a_prompt_too_long_for_the_model_is_the_models_failure_and_is_recorded(tmp_path, config, secrets):
    async with FakeOpenAI(models=("gpt-4o-mini",), context=64) as small:
        ScriptedTeam(SPECS).install(small)
        config = with_changes(config, llm={"base_url": small.base_url})
        results = await evaluate(tmp_path, config, secrets, "single", ContentSandbox())
    assert [(r.problem, r.passed, r.status, r.model_calls) for r in results] == [
        ("python-1-one-shot", False, "error", 1), ("python-2-after-failure", False, "error", 1)]
    assert "context" in results[0].reason and results[0].score == "no code to test"
