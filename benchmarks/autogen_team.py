"""The AutoGen 0.7.5 side of ``benchmarks.autogen_bench``, run by the benchmark in a virtualenv of its own (never
imported by the product): the same agents, in the same fixed order, against the same scripted server, as a group
chat (every agent is sent its system prompt and the whole transcript), streaming as codegen-chat does.

    <autogen venv>/bin/python benchmarks/autogen_team.py SPEC.json

SPEC.json: {"base_url", "task", "order": [role, ...], "system": {role: system prompt}}.
"""

import asyncio
import json
import sys


async def main(spec: dict) -> None:  # type: ignore[type-arg]
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import MaxMessageTermination
    from autogen_agentchat.teams import SelectorGroupChat
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    order = spec["order"]
    info = {"vision": False, "function_calling": False, "json_output": False, "family": "unknown",
            "structured_output": False}
    agents = {role: AssistantAgent(role, OpenAIChatCompletionClient(
        model="gpt-4o-mini", base_url=spec["base_url"], api_key="sk-bench", model_info=info,
        default_headers={"X-Codegen-Agent": role}), system_message=spec["system"][role], model_client_stream=True)
        for role in dict.fromkeys(order)}
    turns = iter(order)

    def fixed_order(messages):  # type: ignore[no-untyped-def]  # the next speaker without a model call
        return next(turns, None)

    team = SelectorGroupChat(list(agents.values()), model_client=next(iter(agents.values()))._model_client,
                             selector_func=fixed_order, allow_repeated_speaker=True,
                             termination_condition=MaxMessageTermination(len(order) + 1))
    async for _ in team.run_stream(task=spec["task"]):
        pass


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        asyncio.run(main(json.load(file)))
