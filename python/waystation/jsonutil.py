"""JSON as Waystation's TypeScript side writes it.

* `dumps` is `JSON.stringify`: members in insertion order, no whitespace,
  numbers formatted as ECMAScript does (`1`, not `1.0`; `1e-7`, not `1e-07`).
* `canonical_json` sorts object keys by UTF-16 code unit, as the TypeScript
  writer does, so the same value gets the same blob name from either language.
* `compute_diff` / `apply_diff` are the structured diff of
  shared/diff/json-diff.ts, used for version deltas.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Union

_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]

Json = Any
Path = list[Union[str, int]]

#: Number.MAX_SAFE_INTEGER: the largest integer a double, so a JSON reader in JavaScript, holds exactly.
MAX_SAFE_INTEGER = 2**53 - 1


def js_number(value: Union[int, float]) -> str:
    """A number the way ECMAScript's Number::toString prints it."""
    if isinstance(value, bool):
        raise TypeError("a bool is not a number")
    if isinstance(value, int):
        if abs(value) <= MAX_SAFE_INTEGER:
            return str(value)
        # JavaScript reads every JSON number as a double. A larger integer a double holds exactly is printed as
        # JSON.stringify prints that double (2**70 as 1.1805916207174113e+21), so both languages write the same text
        # and blob hash; one it would round is refused rather than stored as another number.
        if int(float(value)) != value:
            raise ValueError(
                f"{value} is past the integers JSON keeps exactly (at most {MAX_SAFE_INTEGER} either way, or one a "
                "double holds); save it as a string, or as a float if rounding it is fine"
            )
        return js_number(float(value))
    if not math.isfinite(value):
        raise ValueError(f"{value!r} has no JSON form; checkpoints hold finite numbers only")
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    sign = "-" if value < 0 else ""
    text = repr(abs(value))  # shortest round-trip digits, as ECMAScript uses
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + (int(exp) if exp else 0)  # the decimal point's place in whole+frac
    lead = len(whole + frac) - len((whole + frac).lstrip("0"))
    n = point - lead  # value = 0.digits * 10**n
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + out


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(s: str) -> str:
    out = _encode_string(s)
    # A lone surrogate has no UTF-8 form: JSON.stringify escapes it, so do the same rather than write invalid bytes.
    return _LONE_SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), out)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _write(value: Json, out: list[str], sort: bool) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, (int, float)):
        out.append(js_number(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out, sort)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        keys = sorted(value.keys(), key=_utf16_key) if sort else list(value.keys())
        first = True
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(f"object keys must be strings, got {key!r}")
            if not first:
                out.append(",")
            first = False
            out.append(_string(key))
            out.append(":")
            _write(value[key], out, sort)
        out.append("}")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON: return plain data (dict, list, str, int, float, bool, None)")


def dumps(value: Json) -> str:
    """`JSON.stringify(value)`: insertion order, no whitespace."""
    out: list[str] = []
    _write(value, out, False)
    return "".join(out)


def canonical_json(value: Json) -> str:
    """Canonical JSON: keys sorted by UTF-16 code unit, no whitespace (never a raw line break)."""
    out: list[str] = []
    _write(value, out, True)
    return "".join(out)


def copy_json(value: Json) -> Json:
    """A deep copy of JSON data (dicts, lists, scalars), one frame a level: any value readers accept is copied.

    copy.deepcopy takes two frames a level, so Python's recursion limit stops it short of the 500 levels a
    checkpoint value may nest (write_limits.py).
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[k] = copy_json(v)
        return out
    if isinstance(value, (list, tuple)):
        items = []
        for v in value:
            items.append(copy_json(v))
        return items
    return value


def to_plain(value: Json) -> Json:
    """A deep copy holding only JSON types (tuples become lists); raises TypeError on anything else."""
    return json.loads(dumps(value))


# ---- structured diff (shared/diff/json-diff.ts) ----------------------------------------------


def _same_kind_scalar(a: Json, b: Json) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def compute_diff(a: Json, b: Json) -> list[dict[str, Any]]:
    """The ops that turn `a` into `b` (add/remove/replace with paths), as json-diff.ts computes them."""
    ops: list[dict[str, Any]] = []
    _diff(a, b, [], ops)
    return ops


def _diff(a: Json, b: Json, path: Path, ops: list[dict[str, Any]]) -> None:
    if a is b:
        return
    if isinstance(a, list) and isinstance(b, list):
        common = min(len(a), len(b))
        for i in range(common):
            if a[i] is not b[i]:
                path.append(i)
                _diff(a[i], b[i], path, ops)
                path.pop()
        for i in range(len(a) - 1, len(b) - 1, -1):
            ops.append({"op": "remove", "path": path + [i]})
        for i in range(len(a), len(b)):
            ops.append({"op": "add", "path": path + [i], "value": b[i]})
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key, x in a.items():
            if key not in b:
                ops.append({"op": "remove", "path": path + [key]})
                continue
            y = b[key]
            if x is not y:
                path.append(key)
                _diff(x, y, path, ops)
                path.pop()
        for key, y in b.items():
            if key not in a:
                ops.append({"op": "add", "path": path + [key], "value": y})
        return
    if (isinstance(a, (dict, list)) or isinstance(b, (dict, list))) or not _same_kind_scalar(a, b):
        ops.append({"op": "replace", "path": list(path), "value": b})


class DiffApplyError(ValueError):
    """Ops that do not fit the value they are applied to (a wrong base version)."""


def apply_diff(a: Json, ops: list[dict[str, Any]]) -> Json:
    """Apply ops to a copy of `a` and return it; `a` is not modified."""
    root = json.loads(json.dumps(a))
    for op in ops:
        kind, path = op.get("op"), op.get("path")
        if not isinstance(path, list):
            raise DiffApplyError(f"op {op!r} has no path")
        if not path:
            if kind == "remove":
                raise DiffApplyError("the root cannot be removed")
            root = json.loads(json.dumps(op.get("value")))
            continue
        parent = root
        for i, key in enumerate(path[:-1]):
            try:
                parent = parent[key]
            except (KeyError, IndexError, TypeError):
                raise DiffApplyError(f"cannot apply {kind} at /{'/'.join(map(str, path))}: no container at segment {i}") from None
            if not isinstance(parent, (dict, list)):
                raise DiffApplyError(f"cannot apply {kind} at /{'/'.join(map(str, path))}: no container at segment {i}")
        last = path[-1]
        value = json.loads(json.dumps(op.get("value"))) if "value" in op else None
        where = f"/{'/'.join(map(str, path))}"
        if isinstance(parent, list):
            if not isinstance(last, int) or isinstance(last, bool) or last < 0:
                raise DiffApplyError(f"cannot apply {kind} at {where}: array index expected")
            if kind == "add":
                if last > len(parent):
                    raise DiffApplyError(f"cannot apply add at {where}: index {last} past the end ({len(parent)})")
                parent.insert(last, value)
            elif last >= len(parent):
                raise DiffApplyError(f"cannot apply {kind} at {where}: index {last} past the end ({len(parent)})")
            elif kind == "remove":
                del parent[last]
            else:
                parent[last] = value
        elif isinstance(parent, dict):
            key = str(last)
            if kind == "remove":
                if key not in parent:
                    raise DiffApplyError(f"cannot apply remove at {where}: no key {key!r}")
                del parent[key]
            else:
                parent[key] = value
        else:
            raise DiffApplyError(f"cannot apply {kind} at {where}: the value is not a container")
    return root
