"""Every POSIX-only call sits behind a platform branch (and every Windows-only one too).

Why a static test: CI here runs on Linux, where an unguarded ``fcntl.flock`` or
``os.killpg`` works, so nothing but reading the code can show that a Windows run would
reach it. This walks the shipped code (and the test helpers the portable subset uses)
with ``ast`` and works out, for every statement, on which of linux, darwin and win32 it
can run: a branch on ``sys.platform`` or ``os.name`` (``if``, ``else``, a conditional
expression, an ``and``, an early ``return`` on the other platform) or ``hasattr(module,
NAME)`` narrows it. A POSIX-only name reachable on win32, or a Windows-only name
reachable on linux or darwin, fails the test with its file and line.

The working alternative is for the reviewer to see in the other branch; mypy type-checks
both (``sys.platform`` checks are what mypy understands, which is why they are the guards
recognised here). Names are listed below; add one when you use a new platform-specific
call.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = [
    ROOT / "cassette",
    ROOT / "cassette_mcp",
    ROOT / "examples" / "cassette-tcp" / "src",
    ROOT / "tests" / "helpers" / "support.py",
]

PLATFORMS = frozenset({"linux", "darwin", "win32"})
POSIX = frozenset({"linux", "darwin"})
WINDOWS = frozenset({"win32"})

POSIX_MODULES = frozenset(
    {"fcntl", "termios", "tty", "pty", "pwd", "grp", "resource", "posix", "syslog", "crypt"}
)
WINDOWS_MODULES = frozenset({"msvcrt", "winreg", "winsound", "_winapi", "nt"})

#: module -> names that exist (or work) on POSIX only.
POSIX_NAMES: dict[str, frozenset[str]] = {
    "os": frozenset(
        [
            "fork",
            "forkpty",
            "killpg",
            "setsid",
            "setpgid",
            "getpgid",
            "getpgrp",
            "setpgrp",
            "getuid",
            "geteuid",
            "getgid",
            "getegid",
            "setuid",
            "setgid",
            "getgroups",
            "setgroups",
            "initgroups",
            "chown",
            "lchown",
            "fchown",
            "mkfifo",
            "mknod",
            "set_blocking",
            "get_blocking",
            "pipe2",
            "sync",
            "statvfs",
            "fstatvfs",
            "uname",
            "nice",
            "getloadavg",
            "sysconf",
            "pathconf",
            "fpathconf",
            "openpty",
            "ttyname",
            "wait3",
            "wait4",
            "WNOHANG",
            "O_NONBLOCK",
            "O_NOFOLLOW",
            "sched_getaffinity",
            "sched_setaffinity",
            "posix_spawn",
            "posix_spawnp",
            "register_at_fork",
        ]
    ),
    "signal": frozenset(
        [
            "SIGKILL",
            "SIGHUP",
            "SIGQUIT",
            "SIGUSR1",
            "SIGUSR2",
            "SIGCHLD",
            "SIGALRM",
            "SIGPIPE",
            "SIGSTOP",
            "SIGCONT",
            "SIGTSTP",
            "SIGTTIN",
            "SIGTTOU",
            "SIGWINCH",
            "alarm",
            "setitimer",
            "getitimer",
            "pause",
            "pthread_kill",
            "pthread_sigmask",
            "sigwait",
            "sigwaitinfo",
            "sigtimedwait",
            "siginterrupt",
            "sigpending",
            "SIG_BLOCK",
            "SIG_UNBLOCK",
            "SIG_SETMASK",
        ]
    ),
    "socket": frozenset({"AF_UNIX", "SO_REUSEPORT", "sethostname"}),
    # select() takes sockets only on Windows; the others do not exist there.
    "select": frozenset({"select", "poll", "epoll", "kqueue", "kevent", "devpoll"}),
    # Readiness of an arbitrary descriptor and signal receivers: not on Windows' proactor.
    "anyio": frozenset({"wait_readable", "wait_writable", "open_signal_receiver"}),
}
#: Attribute names that are POSIX-only whatever they are looked up on (event-loop methods).
POSIX_METHODS = frozenset({"add_reader", "add_writer", "add_signal_handler"})
#: Keyword arguments of subprocess.Popen / anyio.open_process that are POSIX-only.
POSIX_KEYWORDS = frozenset({"preexec_fn", "start_new_session", "process_group", "pass_fds"})
WINDOWS_NAMES: dict[str, frozenset[str]] = {
    "os": frozenset({"startfile"}),
    "signal": frozenset({"CTRL_C_EVENT", "CTRL_BREAK_EVENT"}),
    "subprocess": frozenset(
        {"CREATE_NEW_PROCESS_GROUP", "CREATE_NEW_CONSOLE", "STARTUPINFO", "CREATE_NO_WINDOW"}
    ),
}


def _available(module: str, name: str, platform: str) -> bool:
    if name in POSIX_NAMES.get(module, ()):
        return platform in POSIX
    if name in WINDOWS_NAMES.get(module, ()):
        return platform in WINDOWS
    return True


# -- what a test says about the platform -----------------------------------------------------

Truth = bool | None  # None: not decided by the platform


def _platform_value(node: ast.expr, platform: str) -> str | None:
    """The value ``sys.platform`` or ``os.name`` has on ``platform``, if ``node`` is one."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if (node.value.id, node.attr) == ("sys", "platform"):
            return platform
        if (node.value.id, node.attr) == ("os", "name"):
            return "nt" if platform == "win32" else "posix"
    return None


def _truth(test: ast.expr, platform: str) -> Truth:
    """What ``test`` evaluates to on ``platform``: True, False, or None if it depends on
    more than the platform."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, platform)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [_truth(v, platform) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in values else (True if all(values) else None)
        return True if True in values else (False if all(v is False for v in values) else None)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compare(test, platform)
    if isinstance(test, ast.Call) and test.args and isinstance(test.args[-1], ast.Constant):
        return _call(test, platform)
    return None


def _compare(test: ast.Compare, platform: str) -> Truth:
    """``sys.platform == "win32"``, ``os.name != "nt"``, ``sys.platform in (...)``."""
    left = _platform_value(test.left, platform)
    right = test.comparators[0]
    if left is None or not isinstance(right, ast.Constant | ast.Tuple | ast.List | ast.Set):
        return None
    constant = ast.literal_eval(right)
    op = test.ops[0]
    if isinstance(op, ast.Eq | ast.NotEq):
        return (left == constant) == isinstance(op, ast.Eq)
    if isinstance(op, ast.In | ast.NotIn):
        return (left in constant) == isinstance(op, ast.In)
    return None


def _call(test: ast.Call, platform: str) -> Truth:
    """``sys.platform.startswith("linux")`` and ``hasattr(module, "NAME")``."""
    last = test.args[-1]
    assert isinstance(last, ast.Constant)
    if isinstance(test.func, ast.Attribute) and test.func.attr == "startswith":
        value = _platform_value(test.func.value, platform)
        return None if value is None else value.startswith(last.value)
    if (
        isinstance(test.func, ast.Name)
        and test.func.id == "hasattr"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
    ):
        return _available(test.args[0].id, str(last.value), platform)
    return None


def _narrow(test: ast.expr, where: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The platforms that reach the true branch and the false branch of ``test``."""
    truths = {p: _truth(test, p) for p in where}
    return (
        frozenset(p for p, t in truths.items() if t is not False),
        frozenset(p for p, t in truths.items() if t is not True),
    )


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Continue | ast.Break)


# -- the walk -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str
    where: frozenset[str]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what} reachable on {', '.join(sorted(self.where))}"


class _Walker:
    def __init__(self, path: str, tree: ast.Module) -> None:
        self.path = path
        self.findings: list[Finding] = []
        # ``x.attr`` is a module's attribute only where ``x`` was imported as a module.
        self.modules = {
            (alias.asname or alias.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }

    def flag(self, node: ast.AST, what: str, where: frozenset[str], *, posix: bool) -> None:
        wrong = where & WINDOWS if posix else where & POSIX
        if wrong:
            kind = "POSIX-only" if posix else "Windows-only"
            line = getattr(node, "lineno", 0)
            self.findings.append(Finding(self.path, line, f"{kind} {what}", wrong))

    def block(self, body: Iterable[ast.stmt], where: frozenset[str]) -> None:
        for stmt in body:
            if not where:
                return
            self.stmt(stmt, where)
            if isinstance(stmt, ast.If):
                then, otherwise = _narrow(stmt.test, where)
                if _exits(stmt.body):
                    where = otherwise
                elif stmt.orelse and _exits(stmt.orelse):
                    where = then

    def stmt(self, stmt: ast.stmt, where: frozenset[str]) -> None:
        if isinstance(stmt, ast.If):
            self.expr(stmt.test, where)
            then, otherwise = _narrow(stmt.test, where)
            self.block(stmt.body, then)
            self.block(stmt.orelse, otherwise)
            return
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                self.module(stmt, alias.name.split(".")[0], where)
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
            top = stmt.module.split(".")[0]
            self.module(stmt, top, where)
            for alias in stmt.names:
                self.name(stmt, top, alias.name, where)
        for field, value in ast.iter_fields(stmt):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.block(value, where)
            elif isinstance(value, list):
                for item in value:
                    self.node(item, where)
            elif field != "test" or not isinstance(stmt, ast.If):
                self.node(value, where)

    def node(self, value: object, where: frozenset[str]) -> None:
        if isinstance(value, ast.expr):
            self.expr(value, where)
        elif isinstance(value, ast.stmt):
            self.stmt(value, where)
        elif isinstance(value, ast.AST):
            for child in ast.iter_child_nodes(value):
                self.node(child, where)

    def expr(self, expr: ast.expr, where: frozenset[str]) -> None:
        if isinstance(expr, ast.IfExp):
            then, otherwise = _narrow(expr.test, where)
            self.expr(expr.test, where)
            self.expr(expr.body, then)
            self.expr(expr.orelse, otherwise)
            return
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And):
            for value in expr.values:  # each operand runs only where those before it held
                self.expr(value, where)
                where, _ = _narrow(value, where)
            return
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id in self.modules:
                self.name(expr, expr.value.id, expr.attr, where)
            elif (
                isinstance(expr.value, ast.Attribute)
                and isinstance(expr.value.value, ast.Name)
                and expr.value.value.id == "anyio"
                and "anyio" in self.modules
            ):
                self.name(expr, "anyio", expr.attr, where)  # anyio.lowlevel.wait_readable
            if expr.attr in POSIX_METHODS:
                self.flag(expr, f".{expr.attr}()", where, posix=True)
        if isinstance(expr, ast.Call):
            for keyword in expr.keywords:
                if keyword.arg in POSIX_KEYWORDS:
                    self.flag(keyword.value, f"argument {keyword.arg}=", where, posix=True)
        for child in ast.iter_child_nodes(expr):
            self.node(child, where)

    def module(self, node: ast.AST, module: str, where: frozenset[str]) -> None:
        if module in POSIX_MODULES:
            self.flag(node, f"module {module}", where, posix=True)
        if module in WINDOWS_MODULES:
            self.flag(node, f"module {module}", where, posix=False)

    def name(self, node: ast.AST, module: str, name: str, where: frozenset[str]) -> None:
        if module in POSIX_MODULES or module in WINDOWS_MODULES:
            self.module(node, module, where)
        elif name in POSIX_NAMES.get(module, ()):
            self.flag(node, f"{module}.{name}", where, posix=True)
        elif name in WINDOWS_NAMES.get(module, ()):
            self.flag(node, f"{module}.{name}", where, posix=False)


def findings(source: str, path: str = "<string>") -> list[Finding]:
    """The unguarded platform-specific uses in ``source``."""
    tree = ast.parse(source)
    walker = _Walker(path, tree)
    walker.block(tree.body, PLATFORMS)
    return walker.findings


def _files() -> Iterator[Path]:
    for place in CHECKED:
        yield from sorted(place.rglob("*.py")) if place.is_dir() else [place]


# -- the tests ----------------------------------------------------------------------------------


def test_shipped_code_guards_every_platform_specific_call() -> None:
    found = [
        str(f)
        for path in _files()
        for f in findings(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, "unguarded platform-specific calls:\n" + "\n".join(found)


def test_the_walk_reads_what_it_should() -> None:
    assert len(list(_files())) > 100  # the shipped code, not an empty folder


@pytest.mark.parametrize(
    "source",
    [
        "import fcntl",
        "import os\nos.killpg(1, 9)",
        "from os import killpg",
        "import signal\nx = signal.SIGKILL",
        "import subprocess\nsubprocess.Popen(['x'], start_new_session=True)",
        "import anyio\nasync def f(fd):\n    await anyio.wait_readable(fd)",
        "import sys\nif sys.platform == 'linux':\n    pass\nelse:\n    import fcntl",
        "import msvcrt",
        "import sys\nif sys.platform != 'win32':\n    import msvcrt",
        "import sys, os\nif sys.platform == 'darwin' or x:\n    os.killpg(1, 9)",
        "loop.add_signal_handler(2, f)",
        "import anyio.lowlevel\nasync def f(fd):\n    await anyio.lowlevel.wait_writable(fd)",
    ],
)
def test_an_unguarded_use_is_found(source: str) -> None:
    assert findings(source), source


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nif sys.platform == 'win32':\n    import msvcrt\nelse:\n    import fcntl",
        "import sys\nif sys.platform != 'win32':\n    import fcntl",
        "import os\nif os.name == 'posix':\n    os.killpg(1, 9)",
        "import sys\ndef f():\n    if sys.platform == 'win32':\n        return\n    import fcntl",
        "import signal\nx = signal.SIGKILL if hasattr(signal, 'SIGKILL') else None",
        "import sys, os\nif sys.platform != 'win32' and ready:\n    os.set_blocking(0, False)",
        "import sys, os\nok = sys.platform != 'win32' and os.get_blocking(0)",
        "import sys\nif sys.platform.startswith('linux'):\n    import fcntl",
        "import sys\nif sys.platform in ('linux', 'darwin'):\n    import pwd",
        "import sys, subprocess\nif sys.platform == 'win32':\n"
        "    f = subprocess.CREATE_NEW_PROCESS_GROUP",
        "resource = {}\nresource.get('uri')",  # a variable, not the module
    ],
)
def test_a_guarded_use_passes(source: str) -> None:
    assert not findings(source), findings(source)
