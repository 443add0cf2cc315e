"""Check tool-call arguments against the tool's schema before the tool runs.

Models often send `"5"` for an integer or `"true"` for a boolean. Arguments are first coerced
the way a lenient JSON Schema validator in JavaScript would (the original product's behaviour),
then validated; the error message lists every problem and echoes what the model sent, so the
model can correct itself on the next turn.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

# Any: tool arguments and JSON schemas are arbitrary JSON; their shape is what this module checks.
JSON = Any


class ToolValidationError(ValueError):
    """Arguments (or the tool name) of a call are invalid; `str(error)` is the text shown to the model."""


class _ToolLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any] | type[BaseModel]: ...


class _CallLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> dict[str, Any]: ...


# --------------------------------------------------------------------------- JS-like scalars

_NUMERIC = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def js_number_string(value: float) -> str:
    """`String(value)` as JavaScript writes a number: `1.0` -> `"1"`, `1e21` -> `"1e+21"`, `1e-7` -> `"1e-7"`."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # JavaScript prints -0 as "0"
    sign, digits_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(map(str, digits_tuple))
    assert isinstance(exponent, int)  # finite by the checks above
    k, n = len(digits), exponent + len(digits)  # n: position of the decimal point
    prefix = "-" if sign else ""
    if k <= n <= 21:
        return prefix + digits + "0" * (n - k)
    if 0 < n <= 21:
        return prefix + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return prefix + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{prefix}{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


def _is_number(value: JSON) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parse_number(text: str) -> int | float | None:
    stripped = text.strip()
    if not _NUMERIC.fullmatch(stripped):
        return None
    number = float(stripped)
    if math.isinf(number):
        return None
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _matches_type(value: JSON, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return _is_number(value) and float(value).is_integer()
    if kind == "number":
        return _is_number(value)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return False


_NO_CHANGE = object()


def _coerce_scalar(value: JSON, kind: str) -> JSON:
    """`value` converted to `kind`, or `_NO_CHANGE` when no rule applies."""
    if kind in ("number", "integer"):
        if value is None:
            return 0
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, str):
            number = _parse_number(value)
            if number is not None and (kind == "number" or float(number).is_integer()):
                return int(number) if kind == "integer" else number
    elif kind == "boolean":
        if value is None:
            return False
        if isinstance(value, str) and value in ("true", "false"):
            return value == "true"
        if _is_number(value) and value in (0, 1):
            return value == 1
    elif kind == "string":
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if _is_number(value):
            return js_number_string(value)
    elif kind == "null":
        if value == "" or value is False or (_is_number(value) and value == 0):
            return None
    return _NO_CHANGE


# --------------------------------------------------------------------------- schema walking


def _resolve(schema: JSON, root: Mapping[str, JSON], depth: int = 0) -> Mapping[str, JSON]:
    if not isinstance(schema, Mapping):
        return {}
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#") or depth > 32:
        return schema
    target: JSON = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        target = target.get(part) if isinstance(target, Mapping) else None
    siblings = {k: v for k, v in schema.items() if k != "$ref"}
    return {**_resolve(target, root, depth + 1), **siblings}


def _schema_types(schema: Mapping[str, JSON]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    if "properties" in schema or "additionalProperties" in schema:
        return ["object"]
    if "items" in schema or "prefixItems" in schema:
        return ["array"]
    return []


@functools.lru_cache(maxsize=256)
def _validator_for(schema_json: str) -> Any:  # Any: jsonschema ships no type information
    # Imported on the first tool call, not with `apex_ai`: jsonschema (with attrs and referencing)
    # costs ~30 ms of every start-up, and most runs validate arguments only after the first reply.
    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def _validator(schema: Mapping[str, JSON]) -> Any:  # Any: jsonschema ships no type information
    return _validator_for(json.dumps(schema, sort_keys=True, default=str))


def _member_valid(value: JSON, member: JSON, root: Mapping[str, JSON]) -> bool:
    if not isinstance(member, Mapping):
        return member is not False
    # Carry the root's definitions so local `$ref`s in the member still resolve.
    standalone = {**member, **{k: root[k] for k in ("$defs", "definitions") if k in root}}
    try:
        return bool(_validator(standalone).is_valid(value))
    except Exception:  # an unusable member schema simply does not match
        return False


def _coerce(value: JSON, raw_schema: JSON, root: Mapping[str, JSON]) -> JSON:
    schema = _resolve(raw_schema, root)
    for member in schema.get("allOf") or []:
        value = _coerce(value, member, root)
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list) and members:
            value = _coerce_union(value, members, root)

    kinds = _schema_types(schema)
    if kinds and not any(_matches_type(value, kind) for kind in kinds):
        for kind in kinds:
            converted = _coerce_scalar(value, kind)
            if converted is not _NO_CHANGE:
                value = converted
                break

    if isinstance(value, dict):
        return _coerce_object(value, schema, root)
    if isinstance(value, list):
        return _coerce_array(value, schema, root)
    return value


def _coerce_union(value: JSON, members: Sequence[JSON], root: Mapping[str, JSON]) -> JSON:
    if any(_member_valid(value, member, root) for member in members):
        return value
    for member in members:
        candidate = _coerce(copy.deepcopy(value), member, root)
        if _member_valid(candidate, member, root):
            return candidate
    return value


def _coerce_object(value: dict[str, JSON], schema: Mapping[str, JSON], root: Mapping[str, JSON]) -> dict[str, JSON]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    additional = schema.get("additionalProperties")
    out: dict[str, JSON] = {}
    for key, item in value.items():
        if key in properties:
            out[key] = _coerce(item, properties[key], root)
        elif isinstance(additional, Mapping):
            out[key] = _coerce(item, additional, root)
        else:
            out[key] = item
    return out


def _coerce_array(value: list[JSON], schema: Mapping[str, JSON], root: Mapping[str, JSON]) -> list[JSON]:
    prefix = schema.get("prefixItems")
    items = schema.get("items")
    positional: Sequence[JSON] = prefix if isinstance(prefix, list) else items if isinstance(items, list) else []
    rest = items if isinstance(items, Mapping) else schema.get("additionalItems")
    out: list[JSON] = []
    for index, item in enumerate(value):
        if index < len(positional):
            out.append(_coerce(item, positional[index], root))
        elif isinstance(rest, Mapping):
            out.append(_coerce(item, rest, root))
        else:
            out.append(item)
    return out


def coerce_arguments(arguments: JSON, schema: Mapping[str, JSON]) -> JSON:
    """A coerced deep copy of `arguments` following `schema` (the input is not changed)."""
    return _coerce(copy.deepcopy(arguments), schema, schema)


# --------------------------------------------------------------------------- validation


def _dotted(path: Iterable[JSON]) -> str:
    return ".".join(str(part) for part in path)


def _jsonschema_problems(value: JSON, schema: Mapping[str, JSON]) -> list[tuple[str, str]]:
    try:
        errors = list(_validator(schema).iter_errors(value))
    except Exception as exc:  # a broken tool schema must be reported, not crash the agent loop
        return [("root", f"invalid tool schema: {exc}")]
    problems: list[tuple[str, str]] = []
    reported_required: set[str] = set()
    for error in errors:
        parent = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            # jsonschema reports each missing key separately but only names it in prose: list them all once.
            key = _dotted(parent)
            if key in reported_required:
                continue
            reported_required.add(key)
            problems.extend(
                (_dotted([*parent, missing]), f"must have required property '{missing}'")
                for missing in error.validator_value
                if missing not in error.instance
            )
            continue
        problems.append((_dotted(parent) or "root", str(error.message)))
    return problems


def _pydantic_problems(value: JSON, model: type[BaseModel]) -> list[tuple[str, str]]:
    try:
        model.model_validate(value)
    except ValidationError as exc:
        return [(_dotted(err["loc"]) or "root", err["msg"]) for err in exc.errors()]
    return []


def _format(name: str, problems: list[tuple[str, str]], original: JSON) -> str:
    lines = "\n".join(f"  - {path}: {message}" for path, message in problems)
    received = json.dumps(original, indent=2, ensure_ascii=False, default=str)
    return f'Validation failed for tool "{name}":\n{lines}\n\nReceived arguments:\n{received}'


def validate_tool_arguments(tool: _ToolLike, call: _CallLike) -> dict[str, Any]:
    """Coerce and validate `call.arguments` against `tool.parameters`; return the coerced copy.

    `tool.parameters` is a JSON Schema (checked with `jsonschema`) or a pydantic class (checked
    by the class itself; the returned value is still the coerced dict). Raises
    `ToolValidationError` listing every problem (dotted paths, `root` for the top level).
    """
    original = call.arguments
    parameters = tool.parameters
    if isinstance(parameters, type) and issubclass(parameters, BaseModel):
        schema: Mapping[str, JSON] = parameters.model_json_schema()
    else:
        schema = parameters
    coerced = coerce_arguments(original, schema)
    if isinstance(parameters, type) and issubclass(parameters, BaseModel):
        problems = _pydantic_problems(coerced, parameters)
    else:
        problems = _jsonschema_problems(coerced, schema)
    if problems:
        raise ToolValidationError(_format(tool.name, problems, original))
    return dict(coerced) if isinstance(coerced, dict) else {}


def validate_tool_call(tools: Iterable[_ToolLike], call: _CallLike) -> dict[str, Any]:
    """Find the tool named by `call` and validate its arguments; unknown name -> `Tool "{name}" not found`."""
    for tool in tools:
        if tool.name == call.name:
            return validate_tool_arguments(tool, call)
    raise ToolValidationError(f'Tool "{call.name}" not found')


__all__ = [
    "ToolValidationError",
    "coerce_arguments",
    "js_number_string",
    "validate_tool_arguments",
    "validate_tool_call",
]
