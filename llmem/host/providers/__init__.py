"""Model providers behind one interface (:class:`Provider`); each SDK is an optional extra and is
imported only when its provider is chosen."""

from __future__ import annotations

from collections.abc import Mapping

from llmem.host.errors import ConfigError
from llmem.host.providers.base import CALLBACK_SYSTEM, Provider, ProviderSettings, WireNames, tool_result_text

__all__ = [
    "CALLBACK_SYSTEM",
    "DEFAULT_MODELS",
    "KEY_VARIABLES",
    "PROVIDERS",
    "Provider",
    "ProviderSettings",
    "WireNames",
    "api_key_from",
    "make_provider",
    "tool_result_text",
]

PROVIDERS = ("openai", "gemini", "anthropic", "stand-in")
DEFAULT_MODELS = {
    "openai": "gpt-4o-mini",
    "gemini": "gemini-2.5-flash",
    "anthropic": "claude-sonnet-4-5",
    "stand-in": "deterministic stand-in",
}
#: where each provider's key is looked for, first found wins (the environment, or a .env file)
KEY_VARIABLES = {
    "openai": ("LLMEM_HOST_API_KEY", "OPENAI_API_KEY"),
    "gemini": ("LLMEM_HOST_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "anthropic": ("LLMEM_HOST_API_KEY", "ANTHROPIC_API_KEY"),
    "stand-in": (),
}


def api_key_from(provider: str, environ: Mapping[str, str]) -> str | None:
    return next((environ[v] for v in KEY_VARIABLES[provider] if environ.get(v)), None)


def make_provider(name: str, settings: ProviderSettings) -> Provider:
    """The provider called ``name``. A hosted provider without a key is refused here, at start,
    not at the first message; a local server (``base_url``) may need none."""
    if name not in PROVIDERS:
        raise ConfigError(f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}")
    if name != "stand-in" and not settings.api_key and not (name == "openai" and settings.base_url):
        raise ConfigError(
            f"the {name} provider needs an API key: set {' or '.join(KEY_VARIABLES[name][1:])} in the environment "
            "or in a .env file (never on the command line)"
            + ("; a local OpenAI-compatible server needs none: pass --base-url" if name == "openai" else "")
        )
    if name == "openai":
        from llmem.host.providers.openai import OpenAIProvider

        return OpenAIProvider(settings)
    if name == "anthropic":
        from llmem.host.providers.anthropic import AnthropicProvider

        return AnthropicProvider(settings)
    if name == "gemini":
        from llmem.host.providers.gemini import GeminiProvider

        return GeminiProvider(settings)
    from llmem.host.providers.standin import StandInProvider

    return StandInProvider(settings)
