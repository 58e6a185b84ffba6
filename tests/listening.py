"""Test helpers for servers started as real subprocesses on loopback."""

import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_listening(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Return once ``proc`` accepts connections on ``port``; fail with its output if it
    exits or does not listen in time."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                out, err = proc.communicate()
                raise AssertionError(f"the server did not start: {(err or out or '')[-2000:]}")
            time.sleep(0.1)
