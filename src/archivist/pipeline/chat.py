"""A chat model any OpenAI-compatible endpoint serves, with nothing but httpx: the
answering and judging models of ``archivist eval qa`` and the extractor of
``--extractor openai:MODEL``. A chat model here is ``model(messages) -> str`` with
OpenAI-style messages.

The endpoint is ``$ARCHIVIST_CHAT_URL`` (else ``$ARCHIVIST_LLM_BASE_URL``, else
OpenAI's); the key ``$OPENAI_API_KEY`` (else ``$ARCHIVIST_LLM_API_KEY``). Local servers
(vLLM, Ollama, llama.cpp) serve the same ``/chat/completions``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

from ..errors import InvalidInput

ChatModel = Callable[[list[dict[str, Any]]], str]


def chat_url() -> str:
    return (os.environ.get("ARCHIVIST_CHAT_URL") or os.environ.get("ARCHIVIST_LLM_BASE_URL")
            or "https://api.openai.com/v1").rstrip("/")


class OpenAICompatibleChat:
    """``POST {base_url}/chat/completions``; base URL from ``$ARCHIVIST_CHAT_URL`` (else
    OpenAI's), key from ``$OPENAI_API_KEY``; retries 429 and 5xx with backoff."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, retries: int = 4, backoff: float = 1.0, temperature: float = 0.0,
                 max_tokens: int = 200, json_mode: bool = False) -> None:
        import httpx

        self.base_url = (base_url or chat_url()).rstrip("/")
        self.model, self.retries, self.backoff = model, retries, backoff
        self.temperature, self.max_tokens, self.json_mode = temperature, max_tokens, json_mode
        key = os.environ.get(api_key_env) or os.environ.get("ARCHIVIST_LLM_API_KEY", "")
        self._key = key
        self.shown_url = _without_userinfo(self.base_url)
        self.name = f"openai:{model}@{self.shown_url}"
        self._client = httpx.Client(timeout=timeout, headers={"Authorization": f"Bearer {key}"} if key else {})

    def _said(self, text: str) -> str:
        return _redacted(text, self._key)

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        import httpx

        last: Exception | None = None
        for attempt in range(self.retries + 1):
            try:
                reply = self._client.post(f"{self.base_url}/chat/completions", json={
                    "model": self.model, "messages": messages, "temperature": self.temperature,
                    "max_tokens": self.max_tokens, **({"response_format": {"type": "json_object"}}
                                                      if self.json_mode else {})})
                if reply.status_code in (429, 500, 502, 503, 504):
                    raise ChatError(f"{self.shown_url} answered {reply.status_code}", retriable=True)
                if reply.status_code != 200:  # the body is the endpoint's words: no key of ours, no secret in it
                    raise ChatError(f"{self.shown_url} answered {reply.status_code}: {self._said(reply.text[:200])}")
                content = reply.json()["choices"][0]["message"]["content"]
                return content if isinstance(content, str) else ""
            except httpx.InvalidURL as exc:
                raise ChatError(f"the chat endpoint's URL {self.shown_url} is not a URL: {self._said(str(exc))}") \
                    from None
            except httpx.TransportError as exc:
                last = ChatError(f"{self.shown_url} unreachable: {self._said(str(exc))}", retriable=True)
            except ChatError as exc:
                last = exc
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                last = ChatError(f"{self.shown_url} sent an answer without choices[0].message.content: "
                                 f"{self._said(str(exc))}")
            if not getattr(last, "retriable", False) or attempt == self.retries:
                break
            time.sleep(self.backoff * 2 ** attempt)
        raise last  # type: ignore[misc]


def _without_userinfo(url: str) -> str:
    """``http://bob:pw@host/v1?key=…`` → ``http://***@host/v1?***``: a URL is shown, a
    password or a key in it never."""
    return re.sub(r"(?<=://)[^/@\s]+@", "***@", re.sub(r"[?#][^\s]*", "?***", url))


def _redacted(text: str, key: str) -> str:
    from .episodes import redact_secrets

    if key:
        text = text.replace(key, "***")
    return _without_userinfo(redact_secrets(text)[0])


class ChatError(InvalidInput):
    """A chat endpoint failed (after its retries); ``retriable`` when waiting might help."""

    def __init__(self, message: str, *, retriable: bool = False) -> None:
        super().__init__(message)
        self.retriable = retriable


def chat_model(spec: str) -> ChatModel:
    """``openai:MODEL`` → :class:`OpenAICompatibleChat`."""
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        return OpenAICompatibleChat(spec.removeprefix("openai:"))
    raise InvalidInput(f"unknown chat model {spec!r}: use openai:MODEL (base URL from $ARCHIVIST_CHAT_URL)")