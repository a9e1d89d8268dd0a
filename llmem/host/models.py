"""The models a host offers: one or several (provider, model) choices, the first the default; each
chat (session) uses the one chosen on its page.

On the command line a choice is ``PROVIDER:MODEL`` (``openai:gpt-4o-mini``,
``anthropic:claude-sonnet-4-5``), ``stand-in``, or a bare model name for ``--provider``'s
provider (``llama3.1:8b``: a colon after a name that is no provider is part of the model's name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llmem.host.errors import ConfigError
from llmem.host.providers import DEFAULT_MODELS, PROVIDERS, Provider, ProviderSettings, api_key_from, make_provider

__all__ = ["Models", "parse_choice"]

STAND_IN = "stand-in"


def parse_choice(entry: str, provider: str) -> tuple[str, str]:
    """``(provider, model)`` of one ``--model`` entry; ``provider`` is ``--provider``'s."""
    text = entry.strip()
    if text == STAND_IN:
        return STAND_IN, DEFAULT_MODELS[STAND_IN]
    head, sep, tail = text.partition(":")
    if sep and head in PROVIDERS:
        return head, tail.strip() or DEFAULT_MODELS[head]
    return provider, text or DEFAULT_MODELS[provider]


class Models:
    """The providers a page may choose from, by id (``openai:gpt-4o-mini``, ``stand-in``), in the
    order given; the first is the default of every new chat."""

    def __init__(self, providers: Iterable[Provider]) -> None:
        self._by_id: dict[str, Provider] = {}
        for provider in providers:
            self._by_id.setdefault(self.id_of(provider), provider)
        if not self._by_id:
            raise ConfigError("no model to offer: give --provider and --model")
        self.default = next(iter(self._by_id))

    @staticmethod
    def id_of(provider: Provider) -> str:
        return STAND_IN if provider.name == STAND_IN else f"{provider.name}:{provider.model}"

    @classmethod
    def from_options(
        cls,
        entries: Sequence[str],
        provider: str,
        *,
        base_url: str | None,
        environ: Mapping[str, str],
        native_tools: bool = True,
    ) -> Models:
        """The choices of ``--model`` (several allowed; none: ``--provider``'s default model), each
        with its key from ``environ``; ``base_url`` is ``--provider``'s. A hosted provider without
        its key is refused here."""
        chosen = [parse_choice(e, provider) for e in entries] or [(provider, DEFAULT_MODELS[provider])]
        made = []
        for name, model in chosen:
            settings = ProviderSettings(
                model,
                base_url=base_url if name == provider and name != STAND_IN else None,
                api_key=api_key_from(name, environ),
            )
            made.append(make_provider(name, settings))
            made[-1].native_tools = native_tools
        return cls(made)

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Any:
        return iter(self._by_id.values())

    def get(self, model_id: str | None) -> Provider:
        """The provider of ``model_id`` (None: the default)."""
        return self._by_id[model_id if model_id in self._by_id else self.default]

    def knows(self, model_id: str) -> bool:
        return model_id in self._by_id

    def describe(self, model_id: str | None = None) -> dict[str, Any]:
        """One choice as the page shows it: id, label, whether it is the stand-in, its suggestions."""
        provider = self.get(model_id)
        return {
            "id": self.id_of(provider),
            "label": provider.label,
            "standIn": provider.name == STAND_IN,
            "suggestions": list(provider.suggestions),
        }

    def listing(self) -> list[dict[str, Any]]:
        return [self.describe(model_id) for model_id in self._by_id]

    async def aclose(self) -> None:
        for provider in self._by_id.values():
            await provider.aclose()
