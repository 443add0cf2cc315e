"""Every package `__init__` of apex_ai declares its exports once and consistently (`apex_ai.testing.exports`)."""

from apex_ai.testing.exports import export_problems


def test_exports_agree() -> None:
    assert export_problems("apex_ai") == []
