"""An extractive summary of a Markdown document: the offline model's answer to
a message that carries a document (llm.py, `offline_reply`).

The rule is electron/llm/extractive-summary.ts's, step for step: prose only,
split into sentences; content words weighted by how often they appear (a
heading's words count double); each sentence scored by its words' weights over
the square root of its length, favouring a section's first sentence and
earlier ones; the best ceil(n / 6) sentences, 2 to 5, in document order after
the title, then the section headings.

Words are found as Unicode's word boundaries (UAX #29) find them, which is
what the TypeScript side's `Intl.Segmenter` does for text written with spaces,
so the same English (or other spaced) document gives the same summary, byte
for byte, in both languages. Chinese, Japanese and Thai text (Burmese, Khmer
and Lao too) has no spaces between words: ICU splits it with dictionaries
Python's standard library does not have, and here each ideograph or hiragana is
a word of its own (a run of Thai letters one word), so the sentences chosen
from such text may differ from the TypeScript summary's (the title, the
sections and the sentences' text never do).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass

_STOP_WORDS = frozenset(
    (
        "a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its "
        "me my no not of on or our she so than that the their them then there these they this those to too was we were what "
        "when where which while who why will with would you your also just about over only such each any all more most other "
        "的 了 是 在 和 与 及 也 就 都 而 这 那 有 个 一个 我 你 他 她 它 们 我们 你们 他们 之 以 于 为 对 把 被 让 从 到 中 上 下 吗 呢 吧 啊 并 或"
    ).split(" ")
)

# UAX #29 word-break classes, as far as spaced text needs them.
_MID_LETTER = frozenset("\u003a\u00b7\u0387\u055f\u05f4\u2027\ufe13\ufe55\uff1a")
_MID_NUM_LET = frozenset("\u002e\u2018\u2019\u2024\ufe52\uff07\uff0e\u0027")
_MID_NUM = frozenset("\u002c\u003b\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b")
_EXTEND_NUM_LET = frozenset("\u005f\u202f\u203f\u2040\u2054\ufe33\ufe34\ufe4d\ufe4e\ufe4f\uff3f")


def _script_kind(c: str) -> str:
    """I for Han and Hiragana, which ICU splits with its dictionary (a word each here); K for Katakana; L otherwise."""
    name = unicodedata.name(c, "")
    if name.startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA")):
        return "I"
    return "K" if name.startswith(("KATAKANA", "HALFWIDTH KATAKANA")) else "L"


@functools.lru_cache(maxsize=8192)
def _kind(c: str) -> str:
    """L letter, N digit, M mark (extends what it follows), I ideograph, K katakana, E joiner, ML / MN / MNL mid, O other."""
    cat = unicodedata.category(c)
    if cat[0] == "M" or cat == "Cf" and c not in "\u200b":
        return "M"
    if cat == "Nd":
        return "N"
    if cat[0] == "L" or cat == "Nl":
        return _script_kind(c)
    if c in _EXTEND_NUM_LET:
        return "E"
    if c in _MID_NUM_LET:
        return "MNL"
    if c in _MID_LETTER:
        return "ML"
    if c in _MID_NUM:
        return "MN"
    return "O"


def _word_segments(text: str) -> list[str]:
    """
    The word-like segments of `text`, as ICU's word segmenter finds them in spaced text: letters and digits joined
    as UAX #29 joins them (WB5 to WB13b: "don't", "3.14", "a_b", "カタカナ"); an ideograph alone.
    """
    kinds = [_kind(c) for c in text]
    words: list[str] = []
    i, n = 0, len(text)
    while i < n:
        k = kinds[i]
        if k == "I":
            j = i + 1
            while j < n and kinds[j] == "M":
                j += 1
            words.append(text[i:j])
            i = j
            continue
        if k not in ("L", "N", "K", "E"):
            i += 1
            continue
        j = i + 1
        last = k
        while j < n:
            kj = kinds[j]
            if kj == "M":
                j += 1
                continue
            # Letters and digits join each other (WB5, WB8 to WB10), katakana joins katakana (WB13), a joiner anything.
            letters_or_digits = last in ("L", "N") and kj in ("L", "N")
            joined = kj in ("L", "N", "K", "E") and "E" in (last, kj)
            if letters_or_digits or last == kj == "K" or joined:
                last = kj
                j += 1
                continue
            # A mid character joins only between two letters (WB6, WB7) or two digits (WB11, WB12).
            nxt = j + 1
            while nxt < n and kinds[nxt] == "M":
                nxt += 1
            after = kinds[nxt] if nxt < n else "O"
            if last == "L" and after == "L" and kj in ("ML", "MNL"):
                j = nxt
                continue
            if last == "N" and after == "N" and kj in ("MN", "MNL"):
                j = nxt
                continue
            break
        # ICU takes a lone joiner ("_") for punctuation, two or more ("__") for a word.
        joiners_only = all(kinds[x] in ("E", "M") for x in range(i, j))
        if not joiners_only or sum(kinds[x] == "E" for x in range(i, j)) >= 2:
            words.append(text[i:j])
        i = j
    return words


def _is_number(w: str) -> bool:
    return all(unicodedata.category(c)[0] == "N" for c in w)


def content_words(text: str) -> list[str]:
    """The content words of a piece of text, lower-cased, without stop words, numbers and one-letter Latin words."""
    out: list[str] = []
    for segment in _word_segments(text):
        w = segment.lower()
        if w in _STOP_WORDS or _is_number(w) or re.fullmatch(r"[a-z]", w):
            continue
        out.append(w)
    return out


def _plain_inline(text: str) -> str:
    """Inline Markdown to plain text: images and HTML gone, links to their text, code and emphasis unmarked."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"(\*\*|__|\*|_|~~)(\S(?:.*?\S)?)\1", r"\2", text)
    return js_trim(re.sub(r"\s+", " ", text))


#: What JavaScript's String.prototype.trim takes away, which str.strip() without arguments does not match exactly.
_JS_SPACE = " \t\n\r\x0b\x0c\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_trim(s: str) -> str:
    """`s.trim()` as JavaScript does it."""
    return s.strip(_JS_SPACE)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])")


def _split_sentences(block: str) -> list[str]:
    out = []
    for s in _SENTENCE_END.split(block):
        s = js_trim(s)
        if any(unicodedata.category(c)[0] in "LN" for c in s):
            out.append(s)
    return out


@dataclass
class _Sentence:
    text: str
    words: list[str]
    opens_section: bool


@dataclass
class ExtractiveSummary:
    """What the summary is made of: the title, the chosen sentences in document order, the other headings, the prose's word count."""

    title: str
    sentences: list[str]
    sections: list[str]
    words: int


def _parse(markdown: str) -> tuple[list[tuple[int, str]], list[_Sentence]]:
    lines = re.sub(r"\r\n?", "\n", markdown).split("\n")
    i = 0
    if lines and js_trim(lines[0]) == "---":
        end = next((j for j in range(1, len(lines)) if re.match(r"^(---|\.\.\.)\s*$", lines[j])), -1)
        if end > 0:
            i = end + 1
    headings: list[tuple[int, str]] = []
    sentences: list[_Sentence] = []
    block: list[str] = []
    section_open = True

    def flush() -> None:
        nonlocal block, section_open
        text = _plain_inline(" ".join(block))
        block = []
        for s in _split_sentences(text):
            sentences.append(_Sentence(s, content_words(s), section_open))
            section_open = False

    fence: str | None = None
    while i < len(lines):
        line = lines[i]
        i += 1
        fence_mark = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if fence is not None:
            if fence_mark and fence_mark.group(1)[0] == fence[0] and len(fence_mark.group(1)) >= len(fence):
                fence = None
            continue
        if fence_mark:
            flush()
            fence = fence_mark.group(1)
            continue
        atx = re.match(r"^\s{0,3}(#{1,6})\s+(.*?)(\s+#+\s*)?$", line)
        setext = block.pop() if not atx and len(block) == 1 and re.match(r"^\s{0,3}(=+|-+)\s*$", line) else None
        if atx or setext is not None:
            flush()
            level = len(atx.group(1)) if atx else (1 if js_trim(line).startswith("=") else 2)
            text = _plain_inline(atx.group(2) if atx else setext or "")
            if text:
                headings.append((level, text))
            section_open = True
            continue
        if re.match(r"^\s*$", line) or re.match(r"^\s*(\|.*\||[-*_]{3,}\s*)$", line) or re.match(r"^(\t| {4})", line) or re.match(r"^\s*</?[a-zA-Z!]", line):
            flush()
            continue
        item = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$", line)
        if item:
            flush()
            block.append(item.group(1))
            flush()
            continue
        block.append(re.sub(r"^\s*>\s?", "", line, count=1))
    flush()
    return headings, sentences


def summary_length(n: int) -> int:
    """How many sentences a document of `n` sentences is summarised in."""
    return min(n, max(2, min(5, math.ceil(n / 6))))


def summarize_markdown(markdown: str, fallback_title: str = "Untitled") -> ExtractiveSummary:
    """Summarise a Markdown document by the rule above; `fallback_title` names a document without headings."""
    headings, sentences = _parse(markdown)
    # By position, as the TypeScript side compares objects: two headings may have the same text.
    at = next((k for k, h in enumerate(headings) if h[0] == 1), 0 if headings else None)
    title = fallback_title if at is None else headings[at][1]
    sections = [text for k, (_, text) in enumerate(headings) if k != at]

    counts: dict[str, int] = {}
    for s in sentences:
        for w in s.words:
            counts[w] = counts.get(w, 0) + 1
    for _, text in headings:
        for w in dict.fromkeys(content_words(text)):
            counts[w] = counts.get(w, 0) + 2
    top = max([1, *counts.values()])

    n = len(sentences)
    scored = []
    for i, s in enumerate(sentences):
        weight = 0.0
        for w in s.words:
            weight += counts.get(w, 0) / top
        base = 0.0 if not s.words else weight / math.sqrt(len(s.words))
        score = base * (1.5 if s.opens_section else 1) * (1 + 0.25 * (1 - i / n))
        scored.append((i, len(s.words) >= 3, score))
    scored.sort(key=lambda t: (not t[1], -t[2], t[0]))
    chosen = sorted(i for i, _, _ in scored[: summary_length(n)])
    return ExtractiveSummary(title, [sentences[i].text for i in chosen], sections, sum(len(s.words) for s in sentences))


def format_summary(summary: ExtractiveSummary) -> str:
    """The summary as text: the title, the chosen sentences as one paragraph, the sections."""
    paragraph = ""
    for s in summary.sentences:
        paragraph = s if paragraph == "" else f"{paragraph}{s}" if re.search(r"[。！？]$", paragraph) else f"{paragraph} {s}"
    lines = [summary.title, "", paragraph or "The document has no prose to summarise."]
    if summary.sections:
        lines += ["", f"Sections: {'; '.join(summary.sections)}."]
    return "\n".join(lines)
