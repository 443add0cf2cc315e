"""Tool argument coercion and validation (spec ai.md §17, acceptance check 16)."""

import json
from typing import Any

import pytest
from pydantic import BaseModel

from apex_ai.types import Tool, ToolCall
from apex_ai.validation import (
    ToolValidationError,
    coerce_arguments,
    js_number_string,
    validate_tool_arguments,
    validate_tool_call,
)


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return schema


def call(name: str = "t", **arguments: Any) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


def test_acceptance_check_16() -> None:
    count = Tool(name="t", description="", parameters=obj({"count": {"type": "integer"}}))
    assert validate_tool_arguments(count, call(count="5")) == {"count": 5}
    flag = Tool(name="t", description="", parameters=obj({"flag": {"type": "boolean"}}))
    assert validate_tool_arguments(flag, call(flag="true")) == {"flag": True}

    read = Tool(name="read", description="", parameters=obj({"path": {"type": "string"}}, ["path"]))
    with pytest.raises(ToolValidationError) as info:
        validate_tool_arguments(read, call("read", offset=3))
    message = str(info.value)
    assert message == (
        'Validation failed for tool "read":\n'
        "  - path: must have required property 'path'\n\n"
        'Received arguments:\n{\n  "offset": 3\n}'
    )


@pytest.mark.parametrize(
    ("kind", "given", "expected"),
    [
        ("number", None, 0),
        ("number", "3.5", 3.5),
        ("number", " 42 ", 42),
        ("number", "1e3", 1000),
        ("number", True, 1),
        ("number", False, 0),
        ("integer", None, 0),
        ("integer", "7", 7),
        ("integer", "-7", -7),
        ("integer", True, 1),
        ("boolean", None, False),
        ("boolean", "true", True),
        ("boolean", "false", False),
        ("boolean", 1, True),
        ("boolean", 0, False),
        ("string", None, ""),
        ("string", 1.0, "1"),
        ("string", 1.5, "1.5"),
        ("string", 12, "12"),
        ("string", True, "true"),
        ("string", False, "false"),
        ("null", "", None),
        ("null", 0, None),
        ("null", False, None),
    ],
)
def test_coercion_table(kind: str, given: Any, expected: Any) -> None:
    schema = obj({"v": {"type": kind}})
    result = coerce_arguments({"v": given}, schema)
    assert result == {"v": expected}
    assert type(result["v"]) is type(expected)


@pytest.mark.parametrize(
    ("kind", "given"),
    [("integer", "3.5"), ("number", "abc"), ("number", ""), ("boolean", "yes"), ("boolean", 2), ("null", "x")],
)
def test_values_without_a_rule_are_left_for_validation(kind: str, given: Any) -> None:
    schema = obj({"v": {"type": kind}})
    assert coerce_arguments({"v": given}, schema) == {"v": given}
    with pytest.raises(ToolValidationError):
        validate_tool_arguments(Tool(name="t", description="", parameters=schema), call(v=given))


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e-7, "1.5e-7"),
        (1e-6, "0.000001"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (123456.789, "123456.789"),
        (1.2345e25, "1.2345e+25"),
        (float("inf"), "Infinity"),
    ],
)
def test_js_number_string(number: float, text: str) -> None:
    assert js_number_string(number) == text


def test_nested_properties_items_and_additional_properties() -> None:
    schema = obj(
        {
            "edits": {
                "type": "array",
                "items": obj({"line": {"type": "integer"}, "text": {"type": "string"}}, ["line"]),
            },
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "boolean"}]},
        }
    )
    args = {"edits": [{"line": "3", "text": 5}], "env": {"A": 1, "B": False}, "pair": ["2", "false"]}
    tool = Tool(name="t", description="", parameters=schema)
    assert validate_tool_arguments(tool, call(**args)) == {
        "edits": [{"line": 3, "text": "5"}],
        "env": {"A": "1", "B": "false"},
        "pair": [2, False],
    }
    assert args["edits"] == [{"line": "3", "text": 5}]  # the original is untouched


def test_nested_errors_use_dotted_paths() -> None:
    schema = obj({"edits": {"type": "array", "items": obj({"line": {"type": "integer"}}, ["line", "text"])}})
    tool = Tool(name="edit", description="", parameters=schema)
    with pytest.raises(ToolValidationError) as info:
        validate_tool_arguments(tool, call("edit", edits=[{"line": "x"}]))
    lines = str(info.value).splitlines()
    assert lines[0] == 'Validation failed for tool "edit":'
    assert "  - edits.0.line: 'x' is not of type 'integer'" in lines
    assert "  - edits.0.text: must have required property 'text'" in lines


def test_root_errors_say_root() -> None:
    tool = Tool(name="t", description="", parameters={"type": "object", "additionalProperties": False})
    with pytest.raises(ToolValidationError, match=r"  - root: Additional properties"):
        validate_tool_arguments(tool, call(x=1))


def test_any_of_prefers_a_member_that_already_validates() -> None:
    schema = obj({"v": {"anyOf": [{"type": "integer"}, {"type": "string"}]}})
    assert coerce_arguments({"v": "5"}, schema) == {"v": "5"}
    assert coerce_arguments({"v": True}, schema) == {"v": 1}
    one_of = obj({"v": {"oneOf": [{"type": "boolean"}, {"type": "null"}]}})
    assert coerce_arguments({"v": "false"}, one_of) == {"v": False}


def test_type_lists_try_each_type_in_order() -> None:
    schema = obj({"v": {"type": ["integer", "null"]}})
    assert coerce_arguments({"v": None}, schema) == {"v": None}
    assert coerce_arguments({"v": "4"}, schema) == {"v": 4}


def test_all_of_and_refs() -> None:
    schema = {
        "type": "object",
        "$defs": {"N": {"type": "integer"}},
        "properties": {"n": {"$ref": "#/$defs/N"}, "m": {"allOf": [{"$ref": "#/$defs/N"}]}},
    }
    assert coerce_arguments({"n": "1", "m": "2"}, schema) == {"n": 1, "m": 2}


class Inner(BaseModel):
    size: int


class ReadParams(BaseModel):
    path: str
    limit: int | None = None
    inner: Inner | None = None


class PydanticTool:
    name = "read"
    parameters = ReadParams


def test_pydantic_tool_validated_by_its_class() -> None:
    tool = PydanticTool()
    assert validate_tool_arguments(tool, call("read", path="a.py", limit="10", inner={"size": "2"})) == {
        "path": "a.py",
        "limit": 10,
        "inner": {"size": 2},
    }
    with pytest.raises(ToolValidationError) as info:
        validate_tool_arguments(tool, call("read", limit="x"))
    message = str(info.value)
    assert "  - path: Field required" in message
    assert "  - limit: " in message
    assert message.endswith('Received arguments:\n{\n  "limit": "x"\n}')


def test_validate_tool_call_finds_tool_by_name() -> None:
    tools = [Tool(name="a", description=""), Tool(name="b", description="", parameters=obj({"n": {"type": "number"}}))]
    assert validate_tool_call(tools, call("b", n="2.5")) == {"n": 2.5}
    with pytest.raises(ToolValidationError) as info:
        validate_tool_call(tools, call("nope"))
    assert str(info.value) == 'Tool "nope" not found'


def test_received_arguments_keep_non_ascii_like_json_stringify() -> None:
    tool = Tool(name="t", description="", parameters=obj({"n": {"type": "integer"}}))
    with pytest.raises(ToolValidationError) as info:
        validate_tool_arguments(tool, call(n="café"))
    assert str(info.value).endswith("Received arguments:\n" + json.dumps({"n": "café"}, indent=2, ensure_ascii=False))


def test_tool_validation_error_is_a_value_error() -> None:
    assert issubclass(ToolValidationError, ValueError)
