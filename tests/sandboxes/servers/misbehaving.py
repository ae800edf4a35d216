"""A JSON-RPC server over stdio that speaks MCP until the tool call, then misbehaves as told by argv[1]:
crash (exits mid-episode), hang (never answers), garbage (answers with malformed JSON-RPC)."""

import json
import sys
import time

MODE = sys.argv[1]
TOOL = {"name": "poke", "description": "Poke the server.", "inputSchema": {"type": "object", "properties": {}}}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


calls = 0
for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": f"misbehaving-{MODE}", "version": "0.1"},
                },
            }
        )
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
    elif method == "tools/call":
        calls += 1
        if calls == 1:  # the first call works, so there is something recorded to keep
            send(
                {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}], "isError": False}}
            )
        elif MODE == "crash":
            sys.exit(3)
        elif MODE == "hang":
            time.sleep(3600)
        else:
            sys.stdout.write('{"jsonrpc": "2.0", "id": ' + str(rid) + ', "result": {"content": [\n')
            sys.stdout.flush()
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
