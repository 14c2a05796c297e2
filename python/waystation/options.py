"""Options an agent does not have, and names an option cannot have.

An options schema that names its properties and does not say it takes others
(`additionalProperties` absent or false) takes only those: `--inptu notes` (a
typo), or an option of another agent, would otherwise start a task as if it
had not been given. A start names such options and writes nothing, in the same
words as the TypeScript runtime (electron/runtime/unknown-options.ts). A schema
without `properties`, or with `additionalProperties` true or a schema, takes
any key. On the command line of `waystation.main` every flag it does not know
is refused so, with the flag it is nearest.

Each option is also a `--name` flag of `waystation.main`, so an option named
like one of its built-in flags could not be told from it: an agent that
declares one is refused when it is defined.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

#: The flags of `waystation.main` itself (cli.py), without their dashes; no option of an agent may take these names.
RESERVED_OPTION_NAMES = (
    "task", "mode", "max-attempts", "approve", "rerun-drifted", "note",
    "effect-happened", "effect-not-happened", "describe", "help",
)


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


def reserved_option_message(agent: str, schema: dict[str, Any]) -> Optional[str]:
    """Why `schema` cannot be the options of `agent`: the properties named like a built-in flag; None when none is."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    # `max_attempts` would be `--max_attempts` beside `--max-attempts`: the same name to a person.
    clashing = [k for k in props if isinstance(k, str) and k.replace("_", "-") in RESERVED_OPTION_NAMES]
    if not clashing:
        return None
    named = ", ".join(f'"{k}"' for k in clashing)
    return (
        f"agent {agent} cannot have an option named {named}: waystation.main gives each option a --flag of its name, and "
        f"these names are its own flags ({', '.join(RESERVED_OPTION_NAMES)}). Rename the option"
    )


def unknown_flag_message(agent: str, flag: str, known: Iterable[str]) -> str:
    """Why the command line of `agent` refuses `flag`, with the known flag (without dashes) it is nearest."""
    name = flag.split("=", 1)[0]
    if not name.startswith("--"):
        return f"agent {agent} takes one directory, and then options as --name VALUE; {name!r} is neither. Nothing was written."
    near = _nearest(name[2:], list(known))
    return f'agent {agent} has no option "{name[2:]}"{f" (did you mean {chr(34)}{near}{chr(34)}?)" if near else ""}. Nothing was written.'
