"""``codegen-chat doctor``: what is wrong with this installation, and how to fix it."""

from __future__ import annotations

from bot.config.doctor_types import CheckResult, DoctorCheck
from bot.config.sections import Config, Secrets
from bot.model.client import OpenAIChatModel
from bot.model.embedded.doctor import embedded_checks
from bot.model.embedded.endpoint import HOW_TO_CONFIGURE, endpoint_configured, uses_embedded
from bot.model.http import EndpointError, NoAnswer, StatusError, Unreachable
from bot.safety.redact import Redactor

SHOWN_MODELS = 12  # of a long model listing, how many a failed check names
PROMPT_ROOM = 512  # tokens a prompt needs at the least, beside the reply, in a model's context


async def model_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    """The endpoint answers, every model the roles use exists there, and their replies fit their context."""
    results = [CheckResult("config", True, f"read from {config.source}")]
    if uses_embedded(config, secrets):
        why = "[llm] provider = \"embedded\"" if config.llm.provider == "embedded" else "none configured"
        results.append(CheckResult("model endpoint", True, f"{why}: the embedded model ({HOW_TO_CONFIGURE})"))
        return [*results, *await embedded_checks(config)]
    if not endpoint_configured(config, secrets):
        return [*results, CheckResult("model endpoint", False, "OPENAI_API_KEY is not set",
                                      "export OPENAI_API_KEY, or OPENAI_BASE_URL for a local server")]
    model = OpenAIChatModel(config, secrets)
    where = model.where
    try:
        try:
            offered = await model.list_models()
        except StatusError as error:
            if error.status in (401, 403):
                return [*results, CheckResult("model endpoint", False, f"{where} rejected the API key",
                                              "check OPENAI_API_KEY")]
            return [*results, CheckResult("model endpoint", False, f"{where} did not answer: HTTP {error.status}",
                                          "check OPENAI_BASE_URL / llm.base_url and that the server runs")]
        except (EndpointError, ValueError) as error:
            return [*results, CheckResult("model endpoint", False, f"{where} did not answer: {_why(error, config)}",
                                          "check OPENAI_BASE_URL / llm.base_url and that the server runs")]
        results.append(CheckResult("model endpoint", True, f"{where} answers ({len(offered)} models)"))
        for name in sorted({config.agent(role).model for role in _roles()}):
            results.append(_offered(name, offered))
            if name in offered:
                results.extend(await _fits(config, model, name))
    finally:
        await model.close()
    return results


def _why(error: EndpointError | ValueError, config: Config) -> str:
    """Why the endpoint gave no model list, in words."""
    if isinstance(error, Unreachable):
        return "it closed the connection" if error.dropped else "nothing accepts connections there"
    if isinstance(error, NoAnswer):
        return f"no answer within {config.llm.request_timeout_s:g}s"
    if isinstance(error, ValueError):
        return "its answer is not an OpenAI-compatible list of models (the URL usually ends in /v1)"
    return str(error) or type(error).__name__


def _offered(name: str, offered: list[str]) -> CheckResult:
    if name in offered:
        return CheckResult(f"model {name}", True, "available")
    listed = ", ".join(sorted(offered)[:SHOWN_MODELS]) + (", ..." if len(offered) > SHOWN_MODELS else "")
    return CheckResult(f"model {name}", False,
                       f"not offered by the endpoint (it offers: {listed or 'no models'})",
                       "set agents.default.model (or a role's model) to one the endpoint offers")


async def _fits(config: Config, model: OpenAIChatModel, name: str) -> list[CheckResult]:
    """A warning for each configured max_tokens that cannot fit the model's context beside a prompt."""
    context = await model.context_window(name)
    if context is None:
        return []
    results = []
    for wanted in sorted({config.agent(r).max_tokens for r in _roles() if config.agent(r).model == name}):
        roles = [r for r in _roles() if config.agent(r).model == name and config.agent(r).max_tokens == wanted]
        if wanted + PROMPT_ROOM > context:
            results.append(CheckResult(
                f"max_tokens of {', '.join(roles)}", False,
                f"{wanted:,} cannot fit: {name} holds {context:,} tokens in all, prompt and reply; "
                "replies are clamped to what each prompt leaves",
                f"set max_tokens under [agents.default] (or the role) to about {context // 2:,}", required=False))
    return results


def _roles() -> list[str]:
    from agents.types import Role

    return [r.value for r in Role]


async def run_doctor(config: Config, secrets: Secrets, checks: list[DoctorCheck]) -> int:
    """Print each check's results and the fix for what failed; 1 when a required check failed. Every line is
    masked of the secrets and of credentials in any URL (a check names the endpoint it reached)."""
    redact = Redactor(secrets.values(), urls=True)
    failed = 0
    for check in checks:
        for result in await check(config, secrets):
            mark = "ok " if result.ok else ("FAIL" if result.required else "warn")
            print(redact(f"[{mark:<4}] {result.name}: {result.detail}"))
            if not result.ok and result.fix:
                print(redact(f"       fix: {result.fix}"))
            failed += (not result.ok) and result.required
    print("All required checks passed." if not failed else f"{failed} required check(s) failed.")
    return 1 if failed else 0
