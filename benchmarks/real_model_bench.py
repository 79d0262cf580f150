"""The team against the model's own plain answer, on a real model: HumanEval pass@1 per mode, with the tokens
and the wall time each solved problem cost, side by side.

    python -m benchmarks.real_model_bench --base-url http://127.0.0.1:8080/v1 --model qwen \\
        [--problems 0-9] [--modes plain,single,team] [--cache real-model-bench.json] [--config config.toml]
        [--max-tokens 1536] [--redo team]

Modes:
- ``plain``: one chat call, temperature 0: "Complete the following Python function. Reply with the whole
  function in one python code block." and the problem's prompt. The first python block of the reply (the whole
  reply when it has none) is the answer; what the prompt defines that the answer leaves out (its imports, a
  helper such as ``poly``) is kept from the prompt, as a person pasting the function into the file would.
- any mode of ``codegen-chat eval`` (``single``, ``team``, ``team-no-review``...): the eval's own attempt, through
  the code paths a user's run takes, with the config's settings (``--config``), the endpoint and model given here.

Every answer is scored the same way: the problem's own tests, in the product's sandbox (Docker).
Results are cached per problem and mode in ``--cache`` as each one is scored, so a stopped benchmark resumes
where it stopped; ``--redo MODE`` measures a mode again (after a change to the team). The cache records the
model: another model needs another cache file. Not part of the test suite; asserts nothing.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import dataclasses
import json
import re
import secrets
import statistics
import sys
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.prompts import PromptBook
from agents.protocols import ChatModel, Sandbox
from agents.types import FileSet, Message, Usage
from bot.config.sections import AgentSettings, Config, Secrets, load_config
from bot.eval.attempts import Parts, attempt, score
from bot.eval.humaneval import MODULE, read_humaneval
from bot.eval.modes import MODES
from bot.eval.problems import Problem
from bot.runs.service import team_settings
from bot.sandbox import DockerSandbox
from codegen_chat.build import team_model

PLAIN = "plain"
PLAIN_PROMPT = "Complete the following Python function. Reply with the whole function in one python code block."
BLOCK = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE)


# -- the plain prompt -----------------------------------------------------------------------------


def plain_answer(reply: str, prompt: str) -> str:
    """The module a plain reply makes: its first python block, with what the prompt defines and the reply
    leaves out (imports, helper functions) kept from the prompt, above it."""
    found = BLOCK.search(reply)
    code = (found.group(1) if found else reply).strip("\n") + "\n"
    try:
        given = {_name(node) for node in ast.parse(code).body}
        kept = [node for node in ast.parse(prompt).body if _name(node) not in given]
    except SyntaxError:
        return code
    lines = prompt.splitlines()
    header = ["\n".join(lines[node.lineno - 1:node.end_lineno]) for node in kept if node.end_lineno]
    return "\n\n".join([*header, code]) if header else code


def _name(node: ast.stmt) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    return ast.dump(node)  # an import or statement: the same statement in the reply is the same "name"


async def plain(problem: Problem, base_url: str, model: str, max_tokens: int) -> dict[str, Any]:
    from openai import AsyncOpenAI

    prompt = problem.starter[f"{MODULE}.py"]
    client = AsyncOpenAI(base_url=base_url, api_key="not-needed", timeout=600)
    started = time.monotonic()
    try:
        response = await client.chat.completions.create(
            model=model, temperature=0, max_tokens=max_tokens,
            messages=[{"role": "user", "content": f"{PLAIN_PROMPT}\n\n```python\n{prompt}```"}],
        )
    finally:
        await client.close()
    wall = time.monotonic() - started
    reply = response.choices[0].message.content or ""
    usage = response.usage
    return {"files": {f"{MODULE}.py": plain_answer(reply, prompt)}, "status": "answered",
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
            "model_calls": 1, "wall_s": wall, "reply": reply}


# -- the eval's modes -----------------------------------------------------------------------------


async def eval_mode(problem: Problem, mode: str, parts: Parts) -> dict[str, Any]:
    recorded = Recorded(parts.model)
    tried = await attempt(problem, MODES[mode], dataclasses.replace(parts, model=recorded),
                          f"bench-{secrets.token_hex(4)}")
    return {"files": tried.files.as_dict(), "status": tried.status, "reason": tried.reason,
            "prompt_tokens": tried.usage.prompt_tokens, "completion_tokens": tried.usage.completion_tokens,
            "model_calls": tried.model_calls, "wall_s": tried.wall_s, "replies": recorded.replies}


class Recorded:
    """The model, with each reply kept (role and text) for reading what went wrong afterwards."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model
        self.replies: list[dict[str, str]] = []

    def model_name(self, role: str) -> str:
        return self._model.model_name(role)

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncGenerator[str | Usage, None]:
        reply = {"role": role, "text": ""}
        self.replies.append(reply)
        async with aclosing(self._model.stream(role, messages, temperature)) as pieces:
            async for piece in pieces:
                if isinstance(piece, str):
                    reply["text"] += piece
                yield piece


# -- the cache ------------------------------------------------------------------------------------


class Cache:
    """Results per ``problem|mode``, written after each one (atomically), for the model they measure."""

    def __init__(self, path: Path, model: str) -> None:
        self.path = path
        data = json.loads(path.read_text()) if path.exists() else {"model": model, "results": {}}
        if data.get("model") != model:
            sys.exit(f"{path} holds results of the model {data.get('model')!r}, not {model!r}: "
                     "give another --cache for another model.")
        self.data = data

    @property
    def results(self) -> dict[str, dict[str, Any]]:
        return self.data["results"]  # type: ignore[no-any-return]

    def get(self, problem: str, mode: str) -> dict[str, Any] | None:
        return self.results.get(f"{problem}|{mode}")

    def put(self, problem: str, mode: str, result: dict[str, Any]) -> None:
        self.results[f"{problem}|{mode}"] = result
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(self.data, indent=1))
        partial.replace(self.path)

    def forget(self, modes: set[str]) -> None:
        for key in [k for k in self.results if k.split("|")[1] in modes]:
            del self.results[key]


# -- the run --------------------------------------------------------------------------------------


def chosen(text: str, count: int) -> list[int]:
    """``0-9,20,30-39`` as problem numbers."""
    numbers: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, _, high = part.partition("-")
        numbers.extend(range(int(low), int(high or low) + 1))
    return [n for n in dict.fromkeys(numbers) if 0 <= n < count]


def configured(args: argparse.Namespace) -> Config:
    """The config given (or the built-in one), pointed at the endpoint and model given."""
    config = load_config(Path(args.config) if args.config else None)
    default = config.agents.get("default", AgentSettings())
    default = dataclasses.replace(default, model=args.model, max_tokens=args.max_tokens or default.max_tokens)
    agents = {role: dataclasses.replace(s, model=None) for role, s in config.agents.items() if role != "default"}
    return dataclasses.replace(config, llm=dataclasses.replace(config.llm, base_url=args.base_url),
                               agents={**agents, "default": default})


async def measure(args: argparse.Namespace) -> None:
    config = configured(args)
    suite = read_humaneval()
    problems = [suite.problems[n] for n in chosen(args.problems, len(suite.problems))]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for mode in modes:
        if mode != PLAIN and mode not in MODES:
            sys.exit(f"unknown mode {mode!r}: plain, or one of {', '.join(MODES)}")
    cache = Cache(Path(args.cache), args.model)
    cache.forget({m.strip() for m in (args.redo or "").split(",")})
    plain_tokens = args.max_tokens or config.agent("programmer").max_tokens
    async with team_model(config, Secrets.from_env()) as (config, model), DockerSandbox(config.sandbox) as sandbox:
        parts = Parts(model, sandbox, PromptBook(), team_settings(config), config.prices)
        for mode in modes:  # mode by mode: the cheap ones give their figures first
            for problem in problems:
                if cache.get(problem.id, mode) is None:
                    await one(problem, mode, parts, sandbox, cache, args, plain_tokens)
    print_table(cache, problems, modes)


async def one(problem: Problem, mode: str, parts: Parts, sandbox: Sandbox, cache: Cache,
              args: argparse.Namespace, plain_tokens: int) -> None:
    if mode == PLAIN:
        result = await plain(problem, args.base_url, args.model, plain_tokens)
    else:
        result = await eval_mode(problem, mode, parts)
    scored = await score(problem, FileSet(result["files"]), sandbox)
    result.update(passed=scored.passed, score=scored.summary, score_output=scored.output[-800:])
    cache.put(problem.id, mode, result)
    print(f"{problem.id:<14} {mode:<16} {'pass' if scored.passed else 'fail':<5} {result['status']:<10} "
          f"{result['model_calls']:>3} calls {result['prompt_tokens'] + result['completion_tokens']:>7} tokens "
          f"{result['wall_s']:7.1f}s", flush=True)


def print_table(cache: Cache, problems: list[Problem], modes: list[str]) -> None:
    print(f"\nHumanEval, model {cache.data['model']}, {len(problems)} problems "
          f"({problems[0].id if problems else ''} .. {problems[-1].id if problems else ''})")
    print(f"{'mode':<16} {'pass@1':>12} {'calls/problem':>14} {'tokens/solved':>14} {'wall s/solved':>14}")
    for mode in modes:
        rows = [r for p in problems if (r := cache.get(p.id, mode)) is not None]
        if not rows:
            continue
        solved = sum(r["passed"] for r in rows)
        tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)
        wall = sum(r["wall_s"] for r in rows)
        print(f"{mode:<16} {solved:>3}/{len(rows):<3}{100 * solved / len(rows):5.1f}% "
              f"{statistics.fmean(r['model_calls'] for r in rows):14.1f} {_per(tokens, solved)} {_per(wall, solved)}")
    both = [p.id for p in problems if all(cache.get(p.id, m) for m in modes)]
    for mode in modes[1:]:
        gained = [p for p in both if cache.get(p, mode)["passed"] and not cache.get(p, modes[0])["passed"]]  # type: ignore[index]
        lost = [p for p in both if not cache.get(p, mode)["passed"] and cache.get(p, modes[0])["passed"]]  # type: ignore[index]
        print(f"{mode} against {modes[0]}: solved {len(gained)} it missed, missed {len(lost)} it solved"
              + (f" ({', '.join(lost)})" if lost else ""))


def _per(total: float, solved: int) -> str:
    return f"{total / solved:14.0f}" if solved else f"{'-':>14}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", required=True, help="the model name the endpoint serves")
    parser.add_argument("--problems", default="0-9", help="HumanEval problem numbers, e.g. 0-9,20-39 (default 0-9)")
    parser.add_argument("--modes", default="plain,single,team", help="plain and the eval's modes (default plain,single,team)")
    parser.add_argument("--cache", default="real-model-bench.json",
                        help="the results file (default real-model-bench.json); with --report, several, comma-separated")
    parser.add_argument("--config", help="the config whose team settings the eval's modes use (default: built-in)")
    parser.add_argument("--max-tokens", type=int, help="max_tokens of every call (default: the config's)")
    parser.add_argument("--redo", help="modes to measure again, dropping their cached results")
    parser.add_argument("--report", action="store_true", help="only print the table of what is cached")
    args = parser.parse_args()
    if args.report:  # several caches (shards of one run, each with its own endpoint) read as one
        suite = read_humaneval()
        caches = [Cache(Path(path), args.model) for path in args.cache.split(",")]
        for other in caches[1:]:
            caches[0].results.update({k: v for k, v in other.results.items() if k not in caches[0].results})
        print_table(caches[0], [suite.problems[n] for n in chosen(args.problems, 164)],
                    [m.strip() for m in args.modes.split(",")])
        return
    asyncio.run(measure(args))


if __name__ == "__main__":
    main()
