"""Partial JSON parsing of streamed tool arguments (spec ai.md §17)."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from apex_ai.partial_json import parse_partial_json, repair_json

ARGS = {
    "path": "src/app/main.py",
    "oldText": 'def f():\n\treturn "x\\y"  # caf\u00e9 \u2603',
    "count": -12.5e3,
    "flags": [True, False, None],
    "nested": {"deep": {"list": [1, 2, {"k": "v"}]}},
    "emoji": "\U0001f600",
}


def test_complete_object_parses_exactly() -> None:
    assert parse_partial_json(json.dumps(ARGS)) == ARGS


def test_trailing_string_is_kept() -> None:
    assert parse_partial_json('{"path": "src/ma') == {"path": "src/ma"}


def test_incomplete_key_and_number_are_dropped() -> None:
    assert parse_partial_json('{"a": "x", "b') == {"a": "x"}
    assert parse_partial_json('{"a": "x", "n": 1.') == {"a": "x"}


def test_empty_non_object_and_garbage_give_empty_dict() -> None:
    assert parse_partial_json("") == {}
    assert parse_partial_json("   ") == {}
    assert parse_partial_json("[1, 2]") == {}
    assert parse_partial_json('"text"') == {}
    assert parse_partial_json("}{") == {}
    assert parse_partial_json("not json") == {}


def test_raw_control_characters_in_strings_are_repaired() -> None:
    assert parse_partial_json('{"content": "line1\nline2\tend\x01"}') == {"content": "line1\nline2\tend\x01"}


def test_invalid_backslash_is_taken_literally() -> None:
    assert parse_partial_json('{"pattern": "\\d+\\.py"}') == {"pattern": "\\d+\\.py"}
    assert parse_partial_json('{"s": "\\uZZZZ"}') == {"s": "\\uZZZZ"}


def test_valid_escapes_are_untouched() -> None:
    text = '{"s": "a\\"b\\\\c\\/d\\n\\u00e9"}'
    assert repair_json(text) == text
    assert parse_partial_json(text) == {"s": 'a"b\\c/d\n\u00e9'}


def test_text_outside_strings_is_not_repaired() -> None:
    assert repair_json('{\n  "a": 1\n}') == '{\n  "a": 1\n}'


def test_cut_escape_at_end_is_dropped_until_completed() -> None:
    assert parse_partial_json('{"s": "ab\\') == {"s": "ab"}
    assert parse_partial_json('{"s": "ab\\u00') == {"s": "ab"}
    assert parse_partial_json('{"s": "ab\\u00e9"}') == {"s": "ab\u00e9"}


def test_every_prefix_of_tool_arguments_parses_without_raising() -> None:
    text = json.dumps(ARGS, ensure_ascii=False)
    for cut in range(len(text) + 1):
        result = parse_partial_json(text[:cut])
        assert set(result) <= set(ARGS)
        # a string value read so far is always a prefix of the final one
        for key, value in result.items():
            if isinstance(value, str):
                assert ARGS[key].startswith(value)  # type: ignore[union-attr]
    assert result == ARGS


def test_every_byte_cut_of_utf8_arguments_never_raises() -> None:
    raw = json.dumps(ARGS, ensure_ascii=False).encode()
    for cut in range(len(raw) + 1):
        result = parse_partial_json(raw[:cut].decode("utf-8", errors="ignore"))
        assert isinstance(result, dict)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=5), st.data())
def test_any_prefix_of_any_object_never_raises(obj: dict[str, object], data: st.DataObject) -> None:
    text = json.dumps(obj, ensure_ascii=data.draw(st.booleans()))
    assert parse_partial_json(text) == obj
    cut = data.draw(st.integers(0, len(text)))
    assert isinstance(parse_partial_json(text[:cut]), dict)


@settings(max_examples=100, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    assert isinstance(parse_partial_json(text), dict)


def test_repair_of_mixed_strings_and_structure() -> None:
    text = '{"a": "x\\q\n", "b": ["\\u12", "\t"]}'
    assert repair_json(text) == '{"a": "x\\\\q\\n", "b": ["\\\\u12", "\\t"]}'
    assert parse_partial_json(text) == {"a": "x\\q\n", "b": ["\\u12", "\t"]}
