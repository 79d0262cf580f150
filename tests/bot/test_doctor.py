"""``doctor``'s model checks against the scripted endpoint: which models it offers, and whether each
role's max_tokens can fit the context the endpoint reports."""

import dataclasses

from bot.config.sections import AgentSettings
from bot.health.doctor import model_checks, run_doctor
from tests.conftest import with_changes
from tests.fakes.openai_server import FakeOpenAI


async def test_a_missing_model_is_named_with_the_models_the_endpoint_offers(config, secrets, capsys):
    config = dataclasses.replace(config, agents={"default": AgentSettings(model="llama3")})
    code = await run_doctor(config, secrets, checks=[model_checks])
    out = capsys.readouterr().out
    assert code == 1
    assert "[FAIL] model llama3: not offered by the endpoint (it offers: gpt-4o, gpt-4o-mini)" in out


async def test_a_max_tokens_that_cannot_fit_the_context_is_a_warning_with_the_fix(config, secrets, capsys):
    async with FakeOpenAI(models=("smollm2",), context=2048, advertise="props") as server:
        config = with_changes(config, llm={"base_url": server.base_url})
        config = dataclasses.replace(config, agents={"default": AgentSettings(model="smollm2", max_tokens=4096),
                                                     "planner": AgentSettings(max_tokens=1024)})
        code = await run_doctor(config, secrets, checks=[model_checks])
    out = capsys.readouterr().out
    assert code == 0  # a warning: replies are clamped, the bot still works
    assert "[warn] max_tokens of manager, programmer, optimizer, tester, checkin: 4,096 cannot fit: smollm2 holds " \
           "2,048 tokens in all" in out
    assert "fix: set max_tokens under [agents.default] (or the role) to about 1,024" in out
    assert "planner" not in out.split("max_tokens of", 1)[1].split(":", 1)[0]
