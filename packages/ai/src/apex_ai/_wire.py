"""The base of every model that goes on the wire: camelCase names, lossless round trips.

Wire rules: attributes are snake_case in Python and camelCase in JSON; optional
fields that are unset (None) are left out, as TypeScript's `JSON.stringify` leaves out
`undefined`; fields that are required but nullable (`parentId: null`) are always written; unknown
fields are kept (`extra="allow"`) so a file written by a newer or foreign writer survives a
load/dump cycle.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, SerializationInfo, SerializerFunctionWrapHandler, model_serializer
from pydantic_core import PydanticSerializationError

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_lone_surrogates(text: str) -> str:
    """`text` with each lone UTF-16 surrogate written as a `\\uXXXX` escape.

    A Python string holds a surrogate only when it is unpaired (a pair is one code point), and such a string
    cannot be encoded as UTF-8. Inside JSON text the escape is the same value, and it is what `JSON.stringify`
    writes for a lone surrogate.
    """
    if not _LONE_SURROGATE.search(text):
        return text
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def json_text(value: Any) -> str:  # Any: a JSON-ready value (dicts, lists, str, numbers, bools, None)
    """Compact JSON as `JSON.stringify` writes it: no spaces, non-ASCII as is, lone surrogates escaped; the result
    always encodes as UTF-8 (a model's or a client's `"\\ud800"` must not break a session file or an output line)."""
    return escape_lone_surrogates(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def to_camel(name: str) -> str:
    """`tool_call_id` -> `toolCallId`, `cache_write_1h` -> `cacheWrite1h` (pydantic's helper gives `1H`)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class WireModel(BaseModel):
    """Base class of wire types; see the module docstring for the rules."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
        # Validators and serializers are built on first use, not at import: a run meets a fraction of the wire
        # types at all, and most of the rest only after its first request is on its way.
        defer_build=True,
    )

    @model_serializer(mode="wrap")
    def _drop_unset_optionals(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        for name, field in type(self).model_fields.items():
            if field.is_required() or getattr(self, name, None) is not None:
                continue
            key = field.alias if (info.by_alias and field.alias) else name
            data.pop(key, None)
        return data

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict of this value, as the wire and session files carry it."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        """Compact JSON text of this value (no spaces, like `JSON.stringify`; see `json_text` for lone surrogates)."""
        try:
            return self.model_dump_json(by_alias=True)
        except PydanticSerializationError:
            # pydantic refuses a string holding a lone surrogate; the slower path writes it as an escape.
            return json_text(self.to_wire())
