"""`write_atomic` replaces only regular files: a symlinked config is written through, a FIFO is left alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from apex_coding_agent.core.file_lock import locked, write_atomic


def test_a_symlinked_file_is_written_through_and_the_link_stays(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "settings.json").write_text("{}\n")
    link = tmp_path / "settings.json"
    link.symlink_to(dotfiles / "settings.json")
    with locked(link):
        write_atomic(link, '{"a": 1}\n')
    assert link.is_symlink() and (dotfiles / "settings.json").read_text() == '{"a": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dotfiles", "settings.json"]


def test_a_fifo_is_never_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        write_atomic(fifo, "{}\n")
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
