"""A suite's tasks and starter files reach the model masked, as a chat request's do: a token pasted into a task
line, or the bot's own key, is never sent on."""

import json

import pytest

from tests.eval.scripted import Kind, ScriptedTeam, Spec
from tests.eval.test_eval_cli import eval_cli, eval_config

pytestmark = pytest.mark.docker
KEY = "sk-test-0123456789abcdef"  # the bot's own key, as eval_cli exports it
PASTED = "ghp_AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHHIIII"


async def test_secrets_in_a_suite_are_masked_before_the_model_sees_them(tmp_path, model_server, docker_client):
    spec = Spec(1, Kind.ONE_SHOT)
    ScriptedTeam([spec]).install(model_server)
    line = json.loads(spec.line())
    line["task"] += f" (the deploy token is {PASTED}; the service key is {KEY})"
    line["starter_files"] = {"notes.txt": f"token={PASTED}\n"}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(line) + "\n")

    code, _, err = await eval_cli(tmp_path, "--suite", "tasks.jsonl", "--modes", "single", "--out", "run",
                                  config=eval_config(tmp_path, model_server.base_url), wait_s=300)
    assert code == 0, err
    sent = json.dumps([request.body for request in model_server.requests])
    assert model_server.requests and PASTED not in sent and KEY not in sent
    assert "the deploy token is [redacted]" in sent
    assert "3 secrets (tokens or keys) in the suite's tasks and starter files were masked" in err
