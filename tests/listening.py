"""Test helpers for servers started as real subprocesses on loopback."""

import signal
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


def stdio_exchange(proc: subprocess.Popen, requests: list[dict]) -> list[dict]:
    """JSON-RPC over a server's stdio, one line each (as MCP's stdio transport is): the
    replies to the requests that have an id; stdin is closed after the last."""
    import json

    replies = []
    for request in requests:
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        if "id" in request:
            replies.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    proc.wait(60)
    return replies


def stop(proc: subprocess.Popen, timeout: float = 30) -> None:
    """Stop a server as Ctrl-C would; kill it if it does not end in ``timeout`` seconds."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
