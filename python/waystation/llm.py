"""Language models behind one interface, with what each call cost.

`OfflineModel` is the deterministic stand-in of electron/llm/offline-provider.ts:
the same messages give the same reply, byte for byte, in both languages, so
a task resumed by either gets what an uninterrupted run would have. A message
that carries a document (`document_block`) is answered with an extractive
summary of it (extractive_summary.py), the same in both languages for text
written with spaces; for Chinese, Japanese or Thai text the sentences chosen
may differ, since only ICU, on the TypeScript side, has the dictionaries to
find their words.
`OpenAIModel` uses the `openai` package when it is installed and
OPENAI_API_KEY is set; `model_from_env()` picks one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from .errors import LlmCallError
from .extractive_summary import format_summary, js_trim as _js_trim, summarize_markdown

OFFLINE_MODEL = "waystation-offline"

#: USD per million tokens (in, out), as electron/llm/cost.ts lists them.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4o": (2.5, 10),
    "gpt-4.1": (2, 8),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-5": (1.25, 10),
    "gpt-5-mini": (0.25, 2),
    "gpt-5-nano": (0.05, 0.4),
    OFFLINE_MODEL: (0, 0),
}


def estimate_cost_usd(model: str, tokens_in: int, tokens_out: int, env: Optional[dict[str, str]] = None) -> float:
    """Estimated USD cost of a call; WAYSTATION_PRICE_PER_MTOK="in,out" overrides the table."""
    env = os.environ if env is None else env
    price: Optional[tuple[float, float]] = None
    raw = env.get("WAYSTATION_PRICE_PER_MTOK")
    if raw:
        try:
            a, b = (float(x.strip()) for x in raw.split(",")[:2])
            if a >= 0 and b >= 0:
                price = (a, b)
        except ValueError:
            price = None
    if price is None:
        price = PRICES.get(model) or PRICES.get(re.sub(r"-\d{4}-\d{2}-\d{2}$", "", model)) or (0, 0)
    return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000


@dataclass
class Completion:
    """A model's reply and what it cost."""

    text: str
    model: str
    tokens_in: int
    tokens_out: int
    latency_ms: float
    retries: int = 0
    retry_reasons: list[str] = field(default_factory=list)


class Model(Protocol):
    """What the runtime needs of a model."""

    kind: str
    model: str

    def complete(self, messages: list[dict[str, str]], **opts: Any) -> Completion: ...


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def approximate_tokens(text: str) -> int:
    """About four characters a token (counted in UTF-16 units, as the TypeScript side counts)."""
    n = _utf16_len(text)
    return 0 if n == 0 else max(1, -(-n // 4))


_OPENERS = ["In short", "Put simply", "To sum up", "Overall", "In brief"]
_ANGLES = [
    "the main risk is unclear inputs, so validate them first",
    "edge cases deserve explicit handling",
    "the smallest working version comes first, then tests",
    "each part should be checkable on its own",
    "naming the failure modes early keeps later steps honest",
]


def _utf16_slice(s: str, n: int) -> str:
    units = s.encode("utf-16-le", "surrogatepass")[: 2 * n]
    return units.decode("utf-16-le", "surrogatepass")


def _first_sentence(text: str) -> str:
    flat = _js_trim(re.sub(r"\s+", " ", re.sub(r"(?m)^#.*$", "", text)))
    m = re.match(r"^(.{1,200}?[.!?。！？])(\s|$)", flat, re.S)
    return _js_trim(m.group(1) if m else _utf16_slice(flat, 160))


def document_block(name: str, text: str) -> str:
    """Wrap a document for a prompt, as `<document name="...">` ... `</document>` (electron/llm/document-block.ts)."""
    return f'<document name="{name.replace(chr(34), chr(39))}">\n{text}\n</document>'


def carried_document(content: str) -> Optional[tuple[Optional[str], str]]:
    """The document in a message's text, as (name, text), or None. The last closing tag ends it, so a document may quote the tags."""
    opened = re.search(r'<document(?:\s+name="([^"]*)")?\s*>\n?', content)
    if not opened:
        return None
    end = content.rfind("</document>")
    if end < opened.end():
        return None
    text = content[opened.end() : end]
    return opened.group(1), text[:-1] if text.endswith("\n") else text


def offline_reply(messages: list[dict[str, str]]) -> str:
    """The deterministic reply to a conversation (what offline-provider.ts gives; see the module's note on Chinese text)."""
    last_user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    doc = carried_document(last_user)
    if doc is not None:
        name, text = doc
        return format_summary(summarize_markdown(text, "Untitled" if name is None else name))
    return _prompt_reply(messages, last_user)


def _prompt_reply(messages: list[dict[str, str]], last_user: str) -> str:
    """The reply to a conversation without a document: its request, the shape of any text after it, and a seeded remark."""
    payload = json.dumps([[m.get("role"), m.get("content")] for m in messages], separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(payload.encode("utf-8", "surrogatepass")).digest()
    head, _, body = last_user.partition("\n")
    headings = [_js_trim(h) for h in re.findall(r"(?m)^#{1,6}\s+(.+)$", body)][:5]
    lines = [f"{_OPENERS[digest[0] % len(_OPENERS)]}: {_utf16_slice(_js_trim(head), 120)}"]
    if headings:
        lines.append(f"Sections: {'; '.join(headings)}.")
    opening = _first_sentence(body)
    if opening:
        lines.append(f"It opens with: {opening}")
    words = len([w for w in re.split(r"\s+", body) if w])
    if words > 0:
        lines.append(f"Length: {words} words.")
    lines.append(f"Note: {_ANGLES[digest[1] % len(_ANGLES)]} (ref {digest[:4].hex()}).")
    return "\n".join(lines)


def offline_latency_ms(env: Optional[dict[str, str]] = None) -> float:
    """WAYSTATION_OFFLINE_LATENCY_MS, default 150."""
    raw = (os.environ if env is None else env).get("WAYSTATION_OFFLINE_LATENCY_MS")
    try:
        n = float(raw) if raw not in (None, "") else 150.0
    except ValueError:
        n = 150.0
    return n if n >= 0 else 150.0


class OfflineModel:
    """Deterministic replies, realistic token counts, a configurable latency."""

    kind = "offline"
    model = OFFLINE_MODEL

    def __init__(self, latency_ms: Optional[float] = None) -> None:
        self.latency_ms = offline_latency_ms() if latency_ms is None else latency_ms

    def complete(self, messages: list[dict[str, str]], **opts: Any) -> Completion:
        started = time.monotonic()
        if self.latency_ms > 0:
            time.sleep(self.latency_ms / 1000)
        text = offline_reply(messages)
        return Completion(
            text=text,
            model=self.model,
            tokens_in=sum(approximate_tokens(m.get("content", "")) + 4 for m in messages),
            tokens_out=approximate_tokens(text),
            latency_ms=round((time.monotonic() - started) * 1000),
        )


class OpenAIModel:
    """An OpenAI-compatible server through the `openai` package (OPENAI_BASE_URL, OPENAI_MODEL)."""

    kind = "openai-compatible"

    def __init__(self, api_key: str, model: Optional[str] = None, base_url: Optional[str] = None, max_retries: int = 3) -> None:
        import openai  # only when installed and a key is set

        self.model = model or os.environ.get("OPENAI_MODEL") or "gpt-4o-mini"
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None, max_retries=0)
        self._openai = openai
        self.max_retries = max_retries

    def complete(self, messages: list[dict[str, str]], **opts: Any) -> Completion:
        started = time.monotonic()
        reasons: list[str] = []
        backoff = float(os.environ.get("WAYSTATION_LLM_BACKOFF_MS", "500")) / 1000
        model = opts.get("model") or self.model
        for attempt in range(self.max_retries + 1):
            try:
                res = self._client.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]
                text = res.choices[0].message.content or ""
                usage = res.usage
                return Completion(
                    text=text,
                    model=res.model or model,
                    tokens_in=usage.prompt_tokens if usage else approximate_tokens("".join(m["content"] for m in messages)),
                    tokens_out=usage.completion_tokens if usage else approximate_tokens(text),
                    latency_ms=round((time.monotonic() - started) * 1000),
                    retries=attempt,
                    retry_reasons=reasons,
                )
            except self._openai.APIStatusError as err:  # type: ignore[misc]
                if err.status_code != 429 and err.status_code < 500:
                    raise LlmCallError(f"the model server answered {err.status_code}", model, attempt, reasons, (time.monotonic() - started) * 1000) from None
                reasons.append(f"{err.status_code} {'rate limited' if err.status_code == 429 else 'server error'}")
            except self._openai.APIConnectionError:  # type: ignore[misc]
                reasons.append("connection dropped")
            if attempt < self.max_retries:
                time.sleep(backoff * (2**attempt))
        raise LlmCallError(f"the model call failed after {self.max_retries} retries ({'; '.join(reasons)})", model, self.max_retries, reasons, (time.monotonic() - started) * 1000)


def model_from_env(env: Optional[dict[str, str]] = None) -> Model:
    """OpenAIModel when OPENAI_API_KEY is set and `openai` is installed; otherwise OfflineModel."""
    env = os.environ if env is None else env
    key = env.get("OPENAI_API_KEY")
    if key:
        try:
            import openai  # noqa: F401

            return OpenAIModel(key)
        except ImportError:
            pass
    return OfflineModel(offline_latency_ms(env))
