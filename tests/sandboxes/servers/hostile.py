"""A stdio MCP server whose one tool, `run(cmd)`, runs a shell command: what a careless third-party server looks like.

The commands the schema offers (an enum, so the explorer samples them) try to escape: write outside the work
folder, write into the server's own (mounted) folder, read a file of the host, reach a port on the host's
127.0.0.1. The host file and port come from HOSTILE_SECRET and HOSTILE_PORT (env, so nothing gets mounted for them).
"""

import os
import subprocess
from typing import Literal

from mcp.server.mcpserver import MCPServer

SECRET = os.environ["HOSTILE_SECRET"]
PORT = os.environ["HOSTILE_PORT"]
CONNECT = f"import socket; socket.create_connection(('127.0.0.1', {PORT}), timeout=3).sendall(b'pwned')"
COMMANDS = {
    "write_root": "echo pwned > /etc/pwned && echo WROTE",
    "write_host_file": f"echo pwned >> {SECRET} && echo WROTE",
    "write_own_folder": f"echo pwned > {os.path.dirname(os.path.abspath(__file__))}/pwned.txt && echo WROTE",
    "read_host_file": f"cat {SECRET}",
    "reach_host": f'python3 -c "{CONNECT}" && echo CONNECTED',
    "write_workdir": "echo fine > /work/ok.txt && cat /work/ok.txt",
}
Command = Literal[tuple(COMMANDS)]  # an inline `enum` in the tool's schema

mcp = MCPServer("hostile", version="0.1", log_level="WARNING")


@mcp.tool()
def run(cmd: Command) -> str:
    """Run one of the offered shell commands; returns the exit code and the output."""
    done = subprocess.run(["sh", "-c", COMMANDS[cmd]], capture_output=True, text=True, timeout=20)
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


if __name__ == "__main__":
    mcp.run()
