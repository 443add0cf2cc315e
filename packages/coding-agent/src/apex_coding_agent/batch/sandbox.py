"""Keeping a batch task's writes inside its copy, in the kernel: a Landlock ruleset on the task's process.

Landlock (Linux 5.13+) lets an unprivileged process give up rights for itself and for every process it starts
afterwards; the restriction cannot be lifted. A task's process restricts itself once its copy is made and its
setup has run: from then on the session, every tool, every shell command and the check may create, change,
rename or delete files only under the paths given (the copy, its baseline, the task's output folder, a private
temporary folder) and a few device files a shell writes to (`/dev/null`, `/dev/tty`...). Reading is not
restricted, nor is the network. Writes through a link end where the link leads, so a symlink in the copy that
points out is refused like the path it points to.

Only `ctypes` and the three system calls: no dependency. Where the kernel has no Landlock (or it is disabled),
`restrict_writes` returns False and the task runs unrestricted; the batch then says so (`sandbox: "none"`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from collections.abc import Iterable
from typing import Final

# The system call numbers are the same on every architecture (they were added after the tables were unified).
_SYS_CREATE_RULESET: Final = 444
_SYS_ADD_RULE: Final = 445
_SYS_RESTRICT_SELF: Final = 446
_CREATE_RULESET_VERSION: Final = 1
_RULE_PATH_BENEATH: Final = 1
_PR_SET_NO_NEW_PRIVS: Final = 38
_PR_SET_PDEATHSIG: Final = 1

_WRITE_FILE: Final = 1 << 1
_REMOVE_DIR: Final = 1 << 4
_REMOVE_FILE: Final = 1 << 5
_MAKE_CHAR: Final = 1 << 6
_MAKE_DIR: Final = 1 << 7
_MAKE_REG: Final = 1 << 8
_MAKE_SOCK: Final = 1 << 9
_MAKE_FIFO: Final = 1 << 10
_MAKE_BLOCK: Final = 1 << 11
_MAKE_SYM: Final = 1 << 12
_REFER: Final = 1 << 13
"""ABI 2: moving or linking a file to another folder (without it, ABI 1 refuses every such move)."""
_TRUNCATE: Final = 1 << 14
"""ABI 3: truncating a file (`> file` of an existing one)."""

_FILE_RIGHTS: Final = _WRITE_FILE | _TRUNCATE
"""The write rights that apply to a file itself (a rule on a file may hold only these)."""
_TREE_RIGHTS: Final = (
    _FILE_RIGHTS
    | _REMOVE_DIR
    | _REMOVE_FILE
    | _MAKE_CHAR
    | _MAKE_DIR
    | _MAKE_REG
    | _MAKE_SOCK
    | _MAKE_FIFO
    | _MAKE_BLOCK
    | _MAKE_SYM
    | _REFER
)

SANDBOX_VARIABLE: Final = "APEX_CODE_BATCH_SANDBOX"
"""Set to `off` to run batch tasks without the restriction (their records then say `sandbox: "none"`)."""

SHELL_DEVICES: Final = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)
"""Device files a shell and its commands write to; writing to them changes no file."""


class _RulesetAttr(ctypes.Structure):
    # Only the first field (ABI 1): the kernel reads the size given, and this one handles no network rights.
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (another system, an old kernel, disabled)."""
    if not os.uname().sysname == "Linux":
        return 0
    try:
        version = _libc().syscall(
            _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
        )
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def _rights(abi: int) -> tuple[int, int]:
    """(rights of a folder rule, rights of a file rule) that this ABI knows."""
    tree, file = _TREE_RIGHTS, _FILE_RIGHTS
    if abi < 2:
        tree &= ~_REFER
    if abi < 3:
        tree &= ~_TRUNCATE
        file &= ~_TRUNCATE
    return tree, file


def _fail(what: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"Landlock: {what}: {os.strerror(errno)}")


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent dies (kept across `exec`); nothing where it cannot."""
    with contextlib.suppress(OSError, AttributeError):
        _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def restrict_writes(writable: Iterable[str], devices: Iterable[str] = SHELL_DEVICES) -> bool:
    """Allow this process and everything it starts from now on to write only under the folders `writable` and to
    the device files `devices` (those that exist); reads stay allowed. Irreversible.

    Returns False, changing nothing, where the kernel has no Landlock; raises OSError when a step fails on a
    kernel that has it (a folder of `writable` that cannot be opened, for one): a task must not run unrestricted
    while the batch believes it restricted.
    """
    abi = landlock_abi()
    if abi < 1:
        return False
    libc = _libc()
    tree, file = _rights(abi)
    attr = _RulesetAttr(handled_access_fs=tree)
    ruleset = libc.syscall(
        _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise _fail("creating the ruleset")
    try:
        rules = [(path, tree) for path in writable]
        rules += [(path, tree if os.path.isdir(path) else file) for path in devices if os.path.exists(path)]
        for path, rights in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
                if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)) < 0:  # fmt: skip
                    raise _fail(f"allowing writes under {path}")
            finally:
                os.close(fd)
        # Required of a process without CAP_SYS_ADMIN; it also means setuid programs run without their privileges.
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _fail("setting no_new_privs")
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise _fail("restricting the process")
    finally:
        os.close(ruleset)
    return True


__all__ = ["SANDBOX_VARIABLE", "SHELL_DEVICES", "die_with_parent", "landlock_abi", "restrict_writes"]
