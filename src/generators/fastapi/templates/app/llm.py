"""Which LLM the agents talk to, and one JSON request to it.

The provider is chosen from the environment exactly as Charter's own tools choose it (src/llm in
Charter): SVC_AI_MODEL (`provider:model`) first, then the first of
ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, OPENROUTER_API_KEY,
OLLAMA_BASE_URL, LMSTUDIO_BASE_URL that is set. OPENAI_BASE_URL points OpenAI's slot at any server
speaking chat completions (a gateway, a local server, the fake of Charter's tests); the key is
optional there. Anthropic is called through its Messages API, every other provider through
OpenAI-compatible chat completions; the JSON always comes back in the message content (a response
format, never tool calls, so local models work).
"""

import re
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import orjson
from pydantic_settings import BaseSettings, SettingsConfigDict

Api = Literal["anthropic", "openai-compatible"]


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    id: str
    api: Api
    env_var: str
    default_model: str
    base_url: str
    local: bool = False


PROVIDERS: tuple[ProviderInfo, ...] = (
    ProviderInfo("anthropic", "anthropic", "ANTHROPIC_API_KEY", "claude-sonnet-4-5", "https://api.anthropic.com/v1"),
    ProviderInfo("openai", "openai-compatible", "OPENAI_API_KEY", "gpt-4.1-mini", "https://api.openai.com/v1"),
    ProviderInfo(
        "google",
        "openai-compatible",
        "GEMINI_API_KEY",
        "gemini-2.5-flash",
        "https://generativelanguage.googleapis.com/v1beta/openai",
    ),
    ProviderInfo(
        "groq", "openai-compatible", "GROQ_API_KEY", "llama-3.3-70b-versatile", "https://api.groq.com/openai/v1"
    ),
    ProviderInfo(
        "openrouter", "openai-compatible", "OPENROUTER_API_KEY", "openai/gpt-4.1-mini", "https://openrouter.ai/api/v1"
    ),
    ProviderInfo("ollama", "openai-compatible", "OLLAMA_BASE_URL", "llama3.1", "", local=True),
    ProviderInfo("lmstudio", "openai-compatible", "LMSTUDIO_BASE_URL", "qwen2.5-7b-instruct", "", local=True),
)
_ALIASES = {"gemini": "google", "lm-studio": "lmstudio"}
DEFAULT_TIMEOUT_SECONDS = 60.0
CONFIGURE_HINT = (
    "set one of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, OPENROUTER_API_KEY, "
    "or OLLAMA_BASE_URL / LMSTUDIO_BASE_URL for a local server (optionally SVC_AI_MODEL=provider:model)"
)


class AiSettings(BaseSettings):
    """The provider variables, from the environment or the .env file; empty counts as unset."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    SVC_AI_MODEL: str = ""
    SVC_AI_TIMEOUT: str = ""
    ANTHROPIC_API_KEY: str = ""
    OPENAI_API_KEY: str = ""
    OPENAI_BASE_URL: str = ""
    GEMINI_API_KEY: str = ""
    GROQ_API_KEY: str = ""
    OPENROUTER_API_KEY: str = ""
    OLLAMA_BASE_URL: str = ""
    LMSTUDIO_BASE_URL: str = ""

    def get(self, name: str) -> str | None:
        value = str(getattr(self, name, "") or "").strip()
        return value or None


@dataclass(frozen=True, slots=True)
class Provider:
    id: str
    api: Api
    model: str
    base_url: str
    api_key: str | None
    # Why this one, in words (`SVC_AI_MODEL=...`, `ANTHROPIC_API_KEY is set`).
    reason: str
    timeout: float

    def describe(self) -> str:
        return f"{self.id}/{self.model}"


@dataclass(frozen=True, slots=True)
class NoProvider:
    reason: str
    hint: str = CONFIGURE_HINT


def select_provider(env: AiSettings | None = None) -> Provider | NoProvider:
    env = env if env is not None else AiSettings()
    raw_timeout = env.get("SVC_AI_TIMEOUT")
    try:
        timeout = float(raw_timeout) if raw_timeout is not None else DEFAULT_TIMEOUT_SECONDS
    except ValueError:
        timeout = -1.0
    if not timeout > 0:
        return NoProvider(f"SVC_AI_TIMEOUT={raw_timeout} is not a positive number of seconds", "e.g. SVC_AI_TIMEOUT=60")
    forced = env.get("SVC_AI_MODEL")
    if forced is not None:
        name, _, model = forced.partition(":")
        name = name.strip().lower()
        info = next((p for p in PROVIDERS if p.id == _ALIASES.get(name, name)), None)
        if info is None:
            ids = ", ".join(p.id for p in PROVIDERS)
            return NoProvider(
                f"SVC_AI_MODEL={forced} names an unknown provider {name!r}", f"use provider:model, one of {ids}"
            )
        built = _build(info, model.strip() or info.default_model, env, timeout)
        if built is None:
            return NoProvider(
                f"SVC_AI_MODEL={forced} selects {info.id}, but {info.env_var} is not set", f"set {info.env_var}"
            )
        return Provider(
            built.id, built.api, built.model, built.base_url, built.api_key, f"SVC_AI_MODEL={forced}", timeout
        )
    for info in PROVIDERS:
        built = _build(info, info.default_model, env, timeout)
        if built is not None:
            return built
    return NoProvider("no LLM provider is configured")


def _build(info: ProviderInfo, model: str, env: AiSettings, timeout: float) -> Provider | None:
    value = env.get(info.env_var)
    if info.id == "openai":
        url = env.get("OPENAI_BASE_URL")
        if url is not None:
            return Provider(
                info.id, info.api, model, url.rstrip("/"), value, f"OPENAI_BASE_URL is set ({url})", timeout
            )
    if value is None:
        return None
    if info.local:
        base = value.rstrip("/")
        base = base if re.search(r"/v\d+$", base) else f"{base}/v1"
        return Provider(info.id, info.api, model, base, None, f"{info.env_var} is set ({value})", timeout)
    return Provider(info.id, info.api, model, info.base_url, value, f"{info.env_var} is set", timeout)


class LlmError(Exception):
    """The provider gave no usable text: HTTP error, timeout, or a malformed response."""


class LlmClient:
    """One pooled HTTP client per provider; `complete` returns the text of the reply."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        headers = {"content-type": "application/json"}
        if provider.api == "anthropic":
            headers |= {"x-api-key": provider.api_key or "", "anthropic-version": "2023-06-01"}
        elif provider.api_key:
            headers["authorization"] = f"Bearer {provider.api_key}"
        self._http = httpx.AsyncClient(base_url=provider.base_url, headers=headers, timeout=provider.timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(self, system: str, prompt: str) -> str:
        p = self.provider
        if p.api == "anthropic":
            path = "/messages"
            body: dict[str, Any] = {
                "model": p.model,
                "max_tokens": 1024,
                "system": system,
                "messages": [{"role": "user", "content": prompt}],
            }
        else:
            path = "/chat/completions"
            body = {
                "model": p.model,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
                "response_format": {"type": "json_object"},
                "temperature": 0,
            }
        try:
            response = await self._http.post(path, content=orjson.dumps(body))
        except httpx.TimeoutException as exc:
            raise LlmError(f"no reply within {p.timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise LlmError(f"the provider could not be reached: {exc}") from exc
        if response.status_code >= 400:
            raise LlmError(f"the provider answered HTTP {response.status_code}: {response.text[:300]}")
        try:
            data = response.json()
            if p.api == "anthropic":
                return "".join(part.get("text", "") for part in data["content"] if part.get("type") == "text")
            return str(data["choices"][0]["message"]["content"] or "")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LlmError(f"the provider's response has no message: {response.text[:300]}") from exc


_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.IGNORECASE | re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's text: the whole text, a ```json fence, or first `{` to last `}`."""
    candidates = [text.strip()]
    fence = _FENCE.search(text)
    if fence:
        candidates.append(fence.group(1).strip())
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last:
        candidates.append(text[first : last + 1])
    for candidate in candidates:
        try:
            value = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None
