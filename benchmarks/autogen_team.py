"""The AutoGen 0.7.5 side of ``benchmarks.autogen_bench``, run by the benchmark in a virtualenv of its own (never
imported by the product): the same agents, in the same fixed order, against the same scripted server, as a group
chat (every agent is sent its system prompt and the whole transcript), streaming as codegen-chat does.

    <autogen venv>/bin/python benchmarks/autogen_team.py SPEC.json

SPEC.json: {"base_url", "task", "order": [role, ...], "system": {role: system prompt}, "tests": [output, ...]}.
The role "sandbox" in the order posts the next test run's output to the chat (what codegen-chat's sandbox
printed at that point of its run), without a model call, as a code-executing agent would.
"""

import asyncio
import json
import sys


async def main(spec: dict) -> None:  # type: ignore[type-arg]
    from autogen_agentchat.agents import AssistantAgent, BaseChatAgent
    from autogen_agentchat.base import Response
    from autogen_agentchat.conditions import MaxMessageTermination
    from autogen_agentchat.messages import TextMessage
    from autogen_agentchat.teams import SelectorGroupChat
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    order = spec["order"]
    info = {"vision": False, "function_calling": False, "json_output": False, "family": "unknown",
            "structured_output": False}
    agents = {role: AssistantAgent(role, OpenAIChatCompletionClient(
        model="gpt-4o-mini", base_url=spec["base_url"], api_key="sk-bench", model_info=info,
        default_headers={"X-Codegen-Agent": role}), system_message=spec["system"][role], model_client_stream=True)
        for role in dict.fromkeys(order) if role != "sandbox"}

    class Sandbox(BaseChatAgent):  # type: ignore[misc]
        def __init__(self, outputs: list[str]) -> None:
            super().__init__("sandbox", "runs the tests and posts their output")
            self._outputs = iter(outputs)

        @property
        def produced_message_types(self):  # type: ignore[no-untyped-def]
            return (TextMessage,)

        async def on_messages(self, messages, cancellation_token):  # type: ignore[no-untyped-def]
            return Response(chat_message=TextMessage(content=next(self._outputs), source=self.name))

        async def on_reset(self, cancellation_token):  # type: ignore[no-untyped-def]
            return None

    participants = [*agents.values(), Sandbox(spec["tests"])] if spec["tests"] else list(agents.values())
    turns = iter(order)

    def fixed_order(messages):  # type: ignore[no-untyped-def]  # the next speaker without a model call
        return next(turns, None)

    team = SelectorGroupChat(participants, model_client=next(iter(agents.values()))._model_client,
                             selector_func=fixed_order, allow_repeated_speaker=True,
                             termination_condition=MaxMessageTermination(len(order) + 1))
    async for _ in team.run_stream(task=spec["task"]):
        pass


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        asyncio.run(main(json.load(file)))
