"""``codegen-chat run`` with the real Docker sandbox: the tests the Tester wrote run for real in a
container, fail on the Programmer's first (buggy) attempt, and pass after the fix."""

import pytest

from bot.sandbox.hardening import LABEL, LABEL_PID
from tests.fakes import team_script as s
from tests.terminal.test_terminal import cli, script_team, write_config


@pytest.mark.docker
async def test_a_run_fails_for_real_in_docker_then_the_team_fixes_it(model_server, tmp_path, docker_client):
    config = write_config(tmp_path, model_server.base_url).read_text().replace(
        "[sandbox]\nenabled = false\n", "[sandbox]\nuse_offline_images = true\n")
    (tmp_path / "config.toml").write_text(config)
    script_team(model_server, programmer=[s.BUGGY_CODE, s.CODE], optimizer=[s.APPROVE, s.APPROVE],
                manager=[s.FIX_CODE])
    pids: list[int] = []
    code, out, err = await cli(tmp_path, "run", "find all intf keys", "--out", "result", config=tmp_path / "config.toml",
                               pids=pids)
    assert code == 0, out + err
    assert "Tests (python): 0 passed, 2 failed" in out  # pytest's own verdict on the buggy code
    assert "Tests (python): 2 passed, 0 failed" in out
    assert "PASSED — tests passed and the review approved" in out
    triage_prompt = model_server.calls("manager")[0].body["messages"][1]["content"]
    assert "test_nested" in triage_prompt and "AssertionError" in triage_prompt  # real pytest output
    assert (tmp_path / "result" / "intf.py").read_text().count("find_intf(value)") == 1
    left = docker_client.containers.list(all=True, sparse=True, filters={"label": [f"{LABEL}=1", f"{LABEL_PID}={pids[0]}"]})
    assert left == []  # the CLI process removed every container it started
