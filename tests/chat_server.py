"""A real HTTP server on loopback for the code around OpenAI-compatible endpoints: every POST's JSON body and
Authorization header are recorded and handed to a function that says what to send back."""

import json
import threading
from collections.abc import Callable
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# A request as recorded: {"body": the JSON body, "authorization": the header or None, "path": the URL path}
Answer = Callable[[dict], tuple[int, bytes]]  # request -> (HTTP status, response body); it may wait first


@contextmanager
def chat_server(answer: Answer):
    """(base URL ending in /v1, the list of requests it received)."""
    requests: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server interface
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            request = {"body": body, "authorization": self.headers.get("Authorization"), "path": self.path}
            requests.append(request)
            status, data = answer(request)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)  # quick stop
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    finally:
        server.shutdown()
        server.server_close()
