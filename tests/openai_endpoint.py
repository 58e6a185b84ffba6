"""A scripted OpenAI-compatible ``/v1/chat/completions`` on loopback, for the code that
talks to chat models over HTTP (no model runs here): ``respond(body) -> str`` writes each
answer, and every request body is kept in ``seen`` with its path and Authorization."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedEndpoint:
    def __init__(self, respond: Callable[[dict[str, Any]], str]) -> None:
        self.respond, self.seen = respond, []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.seen.append({**body, "path": self.path, "auth": self.headers.get("Authorization")})
                said = endpoint.respond(body)
                status = 200
                if isinstance(said, tuple):  # (status, body): an error the endpoint answers with
                    status, data = said[0], said[1].encode()
                else:
                    data = json.dumps({"choices": [{"message": {"role": "assistant", "content": said}}]}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
