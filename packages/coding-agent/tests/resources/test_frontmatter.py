"""The frontmatter subset parser: what skills and templates use, and clear errors for the rest."""

import pytest

from apex_coding_agent.resources.frontmatter import FrontmatterError, split_frontmatter


def test_no_frontmatter_keeps_the_whole_text() -> None:
    parsed = split_frontmatter("# Title\n\nbody\n")
    assert parsed.data == {}
    assert parsed.body == "# Title\n\nbody\n"


def test_scalars_quotes_booleans_and_numbers() -> None:
    text = (
        "---\n"
        "name: pdf-tools  # trailing comment\n"
        "description: 'It''s for PDFs: extract text'\n"
        'license: "MIT \\"style\\""\n'
        "disable-model-invocation: true\n"
        "other: False\n"
        "count: 3\n"
        "ratio: 0.5\n"
        "empty:\n"
        "nothing: ~\n"
        "url: http://x.example/a#b\n"
        "---\n"
        "Body\n"
    )
    parsed = split_frontmatter(text)
    assert parsed.data == {
        "name": "pdf-tools",
        "description": "It's for PDFs: extract text",
        "license": 'MIT "style"',
        "disable-model-invocation": True,
        "other": False,
        "count": 3,
        "ratio": 0.5,
        "empty": None,
        "nothing": None,
        "url": "http://x.example/a#b",
    }
    assert parsed.body == "Body\n"


def test_lists_and_one_level_maps() -> None:
    text = (
        "---\n"
        "allowed-tools: [read, 'bash', \"a, b\"]\n"
        "tags:\n"
        "  - one\n"
        "  - 'two'\n"
        "metadata:\n"
        "  author: me\n"
        "  version: 2\n"
        "---\n"
    )
    assert split_frontmatter(text).data == {
        "allowed-tools": ["read", "bash", "a, b"],
        "tags": ["one", "two"],
        "metadata": {"author": "me", "version": 2},
    }


def test_block_scalars_and_continued_plain_scalars() -> None:
    text = (
        "---\n"
        "literal: |\n"
        "  line one\n"
        "  line two\n"
        "folded: >-\n"
        "  folded one\n"
        "  folded two\n"
        "\n"
        "  new paragraph\n"
        "plain: starts here\n"
        "  and continues\n"
        "---\n"
    )
    assert split_frontmatter(text).data == {
        "literal": "line one\nline two\n",
        "folded": "folded one folded two\nnew paragraph",
        "plain": "starts here and continues",
    }


def test_crlf_and_bom_are_accepted() -> None:
    parsed = split_frontmatter("\ufeff---\r\ndescription: x\r\n---\r\nbody")
    assert parsed.data == {"description": "x"}
    assert parsed.body == "body"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("---\ndescription: x\n", "no closing"),
        ("---\nnot a key line\n---\n", "line 1: expected 'key: value'"),
        ("---\na: 'open\n---\n", "unterminated quoted string"),
        ("---\na: *alias\n---\n", "aliases are not supported"),
        ("---\na: [1, 2\n---\n", "unterminated flow list"),
        ("---\na:\n  - x\n  y: 1\n---\n", "line 3"),
        ("---\na: {b: 1}\n---\n", "flow maps"),
        ('---\na: "bad \\q"\n---\n', "unsupported escape"),
    ],
)
def test_malformed_frontmatter_raises_with_a_location(text: str, fragment: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        split_frontmatter(text)
    assert fragment in str(info.value)
