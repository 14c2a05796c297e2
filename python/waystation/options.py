"""Options an agent does not have.

An options schema that names its properties and does not say it takes others
(`additionalProperties` absent or false) takes only those: `--inptu notes` (a
typo), or an option of another agent, would otherwise start a task as if it
had not been given. A start names such options and writes nothing, in the same
words as the TypeScript runtime (electron/runtime/unknown-options.ts). A schema
without `properties`, or with `additionalProperties` true or a schema, takes
any key.
"""

from __future__ import annotations

from typing import Any, Optional


def _declared(schema: dict[str, Any]) -> Optional[list[str]]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    extra = schema.get("additionalProperties", False)
    return None if extra is not False else list(props)


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        nxt = [i]
        for j in range(1, len(b) + 1):
            nxt.append(min(row[j] + 1, nxt[j - 1] + 1, row[j - 1] + (a[i - 1] != b[j - 1])))
        row = nxt
    return row[len(b)]


def _nearest(name: str, keys: list[str]) -> Optional[str]:
    best: Optional[tuple[str, int]] = None
    for key in keys:
        distance = _edit_distance(name.lower(), key.lower())
        close = distance <= 2 or key.startswith(name) or name.startswith(key)
        if close and (best is None or distance < best[1]):
            best = (key, distance)
    return best[0] if best else None


def unknown_options_message(agent: str, schema: dict[str, Any], options: dict[str, Any]) -> Optional[str]:
    """Why `options` cannot start a task of `agent`: the keys its schema does not take, each with the nearest it does.

    None when every key is one the schema takes.
    """
    keys = _declared(schema)
    if keys is None:
        return None
    unknown = [k for k in options if k not in keys]
    if not unknown:
        return None
    named = []
    for k in unknown:
        near = _nearest(k, keys)
        named.append(f'"{k}" (did you mean "{near}"?)' if near else f'"{k}"')
    has = "it takes no options" if not keys else "its options: " + ", ".join(f'"{k}"' for k in keys)
    return f"agent {agent} has no option {', no option '.join(named)}; {has}. Nothing was written."
