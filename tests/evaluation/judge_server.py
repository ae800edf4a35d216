"""A small LLM-judge stand-in behind a real OpenAI-compatible HTTP server, for the code around endpoint judges.

It answers as the rubrics ask (a `<final_evaluation>` JSON block), with scores by domain (read from the rubric in
the system message: terminal 2, mcp 4, others 3), and misbehaves on purpose where the ground truth says so:
JUDGE-SAYS-NOTHING gets a reply that is not JSON, JUDGE-SLEEPS a reply after `slow_seconds`."""

import json
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCORE_BY_RUBRIC = {"terminal world model": 2, "MCP server world model": 4}


def answer_for(system: str, user: str) -> str:
    if "JUDGE-SAYS-NOTHING" in user:
        return "I would rather not score this one."
    score = next((s for marker, s in SCORE_BY_RUBRIC.items() if marker in system), 3)
    scores = dict.fromkeys(("format", "factuality", "consistency", "realism", "quality"), score)
    return (
        f"Looks fine.\n<final_evaluation>\n{json.dumps({'scores': scores, 'total_score': score})}\n</final_evaluation>"
    )


@contextmanager
def judge_server(slow_seconds: float = 3.0):
    """(base URL, the list of requests it received)."""
    requests: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server interface
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append({"body": body, "authorization": self.headers.get("Authorization")})
            system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
            if "JUDGE-SLEEPS" in user:
                time.sleep(slow_seconds)
            reply = {"choices": [{"message": {"role": "assistant", "content": answer_for(system, user)}}]}
            data = json.dumps(reply).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    finally:
        server.shutdown()
        server.server_close()
