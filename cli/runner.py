"""``dtypefix run``: run a command, pass its output through untouched, keep a bounded tail to explain.

The child's stdout and stderr are copied byte for byte as they arrive (two reader threads, no line
buffering, so tqdm bars still redraw). What explaining needs of the combined output is kept as ``explain`` keeps
a log (:mod:`.keep`): its head, its last :data:`TAIL_BYTES`, and a window around every error in between.
Signals sent to dtypefix are forwarded to the child: TERM, HUP, and USR1/USR2 (Slurm's pre-emption warning);
INT too, unless it came from a terminal, whose Ctrl-C already reached the whole process group (forwarding it
again would interrupt the child's own clean-up). A second TERM escalates to KILL after :data:`KILL_GRACE`
seconds. The child's exit status is returned unchanged (128 + N when it died from signal N, as shells report
it), and at once: output still held open by the child's background processes is drained for at most
:data:`DRAIN_SECONDS`, never waited for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import BinaryIO

from .keep import Keeper

__all__ = ["RunResult", "run_command"]

TAIL_BYTES = 8 << 20
_CHUNK = 65536
DRAIN_SECONDS = 1.0
KILL_GRACE = 10.0
_FORWARDED = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2") if hasattr(signal, name)
)


@dataclass(frozen=True)
class RunResult:
    """What the child did."""

    returncode: int
    """Exit status as a shell reports it (128 + N for a signal)."""
    tail: bytes
    """The kept bytes of stdout and stderr (head, errors, tail), interleaved in arrival order."""


class _Tail:
    """A :class:`~.keep.Keeper` shared by the two reader threads."""

    def __init__(self, limit: int) -> None:
        self.keeper = Keeper(limit)
        self.lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self.lock:
            self.keeper.add(chunk)

    def value(self) -> bytes:
        with self.lock:
            return self.keeper.value()[0]


def _pump(source: BinaryIO, sink: BinaryIO | None, tail: _Tail) -> None:
    """Copy ``source`` to ``sink`` until end of file, keeping what ``tail`` wants; the pump owns and closes
    ``source`` (a pipe or the pty's master).

    When ``sink`` cannot take more (its reader went away, a full disk, a closed descriptor: ``None``), the pump
    stops writing and keeps draining: the child must never block on a full pipe or die of SIGPIPE because of
    where dtypefix's own output goes, and its exit status is what ``run`` returns.
    """
    with source:
        fd = source.fileno()
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except OSError:
                break
            if not chunk:
                break
            tail.add(chunk)
            if sink is None:
                continue
            try:
                sink.write(chunk)
                sink.flush()
            except (OSError, ValueError):
                sink = None


def _kill_if_running(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is None:
        child.kill()


def _binary(stream: object) -> BinaryIO | None:
    """The byte stream under ``sys.stdout`` / ``sys.stderr``; ``None`` when the descriptor was closed at start."""
    return getattr(stream, "buffer", None)


def _on_a_terminal() -> bool:
    try:
        return sys.stdout.isatty() and sys.stderr.isatty() and os.name == "posix"
    except (AttributeError, ValueError):
        return False


def _start_on_a_pty(
    argv: list[str], env: dict[str, str], tail: _Tail
) -> tuple[subprocess.Popen[bytes], list[threading.Thread]]:
    """In a terminal, the child gets one too (a pty), so progress bars and colours look as they do without
    dtypefix; its stdout and stderr then arrive as the terminal shows them, interleaved, and go to our stdout."""
    import pty

    master, slave = pty.openpty()
    with contextlib.suppress(OSError):
        import fcntl
        import termios

        size = fcntl.ioctl(sys.stdout.fileno(), termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
    try:
        child = subprocess.Popen(argv, stdout=slave, stderr=slave, env=env)
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    reader = os.fdopen(master, "rb", buffering=0)
    return child, [threading.Thread(target=_pump, args=(reader, _binary(sys.stdout), tail), daemon=True)]


def run_command(argv: list[str]) -> RunResult:
    """Run ``argv``; raises ``FileNotFoundError`` / ``PermissionError`` when it cannot start.

    The signal handlers go in before the child starts: a TERM that arrives while it is starting is held and
    sent to it once it runs, instead of killing dtypefix and orphaning the child.
    """
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    tail = _Tail(TAIL_BYTES)
    from_terminal = sys.stdin is not None and sys.stdin.isatty()
    child: subprocess.Popen[bytes] | None = None
    held: list[int] = []
    terms = 0

    def forward(signum: int, _frame: object) -> None:
        nonlocal terms
        if child is None:  # not started yet: sent once it runs
            held.append(signum)
            return
        if child.poll() is not None:
            return
        if signum == signal.SIGINT and from_terminal:
            return  # the terminal sent Ctrl-C to the whole foreground group: the child has it already
        if signum == signal.SIGTERM:
            terms += 1
            if terms > 1:
                timer = threading.Timer(KILL_GRACE, _kill_if_running, args=(child,))
                timer.daemon = True
                timer.start()
        child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in _FORWARDED}
    try:
        if _on_a_terminal():
            child, threads = _start_on_a_pty(argv, env, tail)
        else:
            child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            assert child.stdout is not None and child.stderr is not None
            threads = [
                threading.Thread(target=_pump, args=(child.stdout, _binary(sys.stdout), tail), daemon=True),
                threading.Thread(target=_pump, args=(child.stderr, _binary(sys.stderr), tail), daemon=True),
            ]
        for thread in threads:
            thread.start()
        for signum in held:
            forward(signum, None)
        returncode = child.wait()
        deadline = time.monotonic() + DRAIN_SECONDS
        for thread in threads:
            # Background processes of the child may keep the pipes open for ever: drain briefly, then go.
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return RunResult(128 - returncode if returncode < 0 else returncode, tail.value())
