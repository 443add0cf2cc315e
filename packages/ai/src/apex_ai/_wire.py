"""The base of every model that goes on the wire: camelCase names, lossless round trips.

Wire rules (spec ai.md §1): attributes are snake_case in Python and camelCase in JSON; optional
fields that are unset (None) are left out, as TypeScript's `JSON.stringify` leaves out
`undefined`; fields that are required but nullable (`parentId: null`) are always written; unknown
fields are kept (`extra="allow"`) so a file written by a newer or foreign writer survives a
load/dump cycle.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializationInfo, SerializerFunctionWrapHandler, model_serializer


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
        """Compact JSON text of this value (no spaces, like `JSON.stringify`)."""
        return self.model_dump_json(by_alias=True)
