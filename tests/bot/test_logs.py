"""Log lines for a log collector: ``CODEGEN_LOG_FORMAT=json`` gives one JSON object per line, tagged with
the run, platform, thread and agent it belongs to, secrets masked; a bad setting is one clear line."""

import asyncio
import json
import logging

import pytest

from bot.config.sections import ConfigError
from bot.process.logs import configure_logging, log_context, tag_logs
from tests.fakes.openai_server import error
from tests.terminal.test_terminal import cli, script_team, write_config

SECRET = "sk-live-0123456789abcdef"


@pytest.fixture
def root_logging():
    """configure_logging replaces the root logger's handlers; put pytest's back afterwards."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    yield
    root.handlers[:], _ = saved[0], root.setLevel(saved[1])


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_each_line_is_one_json_object_with_its_context_and_secrets_masked(root_logging, capsys):
    configure_logging([SECRET], {"CODEGEN_LOG_FORMAT": "json", "CODEGEN_LOG_LEVEL": "info"})
    log = logging.getLogger("codegen.test")
    with log_context(run_id="r1", platform="slack", thread="C1:17.5"):
        log.info("calling the model with %s", SECRET)
        tag_logs(agent="programmer")
        try:
            raise RuntimeError(f"the server said: bad key {SECRET}\nsecond line")
        except RuntimeError:
            log.exception("the call failed")
    log.warning("outside any run")
    log.debug("below the level")

    err = capsys.readouterr().err
    assert SECRET not in err
    lines = json_lines(err)  # every line parses: a traceback does not spill over several lines
    assert len(lines) == 3
    first, second, third = lines
    assert first["message"] == "calling the model with [redacted]" and first["level"] == "INFO"
    assert first["logger"] == "codegen.test" and first["time"].endswith("+00:00")
    assert {k: first[k] for k in ("run_id", "platform", "thread")} == {"run_id": "r1", "platform": "slack",
                                                                          "thread": "C1:17.5"}
    assert "agent" not in first
    assert second["agent"] == "programmer" and second["run_id"] == "r1"
    assert "RuntimeError: the server said: bad key [redacted]" in second["exception"]
    assert "run_id" not in third and "agent" not in third  # the block's tags end with it


async def test_concurrent_runs_and_their_worker_threads_keep_their_own_tags(root_logging, capsys):
    configure_logging([], {"CODEGEN_LOG_FORMAT": "json", "CODEGEN_LOG_LEVEL": "INFO"})
    log = logging.getLogger("codegen.test")

    async def run(run_id: str, agent: str) -> None:
        tag_logs(run_id=run_id, platform="discord", thread=f"t-{run_id}")
        for _ in range(3):
            tag_logs(agent=agent)
            log.info("in the loop")
            await asyncio.sleep(0)
        await asyncio.to_thread(log.info, "in a worker thread")

    await asyncio.gather(run("a", "planner"), run("b", "tester"))
    lines = json_lines(capsys.readouterr().err)
    assert len(lines) == 8
    for line in lines:
        assert line["thread"] == f"t-{line['run_id']}"
        assert line["agent"] == {"a": "planner", "b": "tester"}[line["run_id"]]


def test_plain_text_stays_the_default(root_logging, capsys):
    configure_logging([SECRET], {})
    logging.getLogger("codegen.test").warning("token %s", SECRET)
    err = capsys.readouterr().err
    assert err.rstrip().endswith("WARNING codegen.test: token [redacted]")


@pytest.mark.parametrize("env, message", [
    ({"CODEGEN_LOG_FORMAT": "xml"}, "CODEGEN_LOG_FORMAT: must be text or json, got 'xml'"),
    ({"CODEGEN_LOG_LEVEL": "loud"}, "CODEGEN_LOG_LEVEL: must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'loud'"),
])
def test_a_bad_setting_is_refused_by_name(root_logging, env, message):
    with pytest.raises(ConfigError) as raised:
        configure_logging([], env)
    assert str(raised.value) == message


async def test_a_terminal_run_logs_json_lines_tagged_with_its_run(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    model_server.script("programmer", error(503))  # the Programmer's first call fails once: a logged retry
    script_team(model_server)
    code, out, err = await cli(tmp_path, "run", "find all intf keys", config=config,
                               env_extra={"CODEGEN_LOG_FORMAT": "json"})
    run_id = out.split("Run ", 1)[1].split(" ", 1)[0]
    lines = json_lines(err)  # every line of stderr is a JSON object
    retry = [line for line in lines if "retry" in line["message"]]
    assert len(retry) == 1, err
    assert retry[0]["level"] == "WARNING" and retry[0]["logger"] == "bot.model.client"
    assert retry[0]["run_id"] == run_id and retry[0]["platform"] == "terminal"
    assert retry[0]["agent"] == "programmer" and retry[0]["thread"].startswith("session-")


async def test_a_bad_log_format_stops_the_command_with_one_line(model_server, tmp_path):
    code, out, err = await cli(tmp_path, "history", config=write_config(tmp_path, model_server.base_url),
                               env_extra={"CODEGEN_LOG_FORMAT": "yaml"})
    assert code == 2
    assert err.strip() == "codegen-chat: CODEGEN_LOG_FORMAT: must be text or json, got 'yaml'"
