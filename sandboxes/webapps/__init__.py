"""Local web apps with server-side state for the Web domain, each served on 127.0.0.1 for one episode."""

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn

APPS = ("shop", "wizard", "wiki")


@dataclass
class RunningApp:
    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)


def build_app(name: str):
    if name == "shop":
        from trajforge.sandboxes.webapps.shop import build
    elif name == "wizard":
        from trajforge.sandboxes.webapps.wizard import build
    elif name == "wiki":
        from trajforge.sandboxes.webapps.wiki import build
    else:
        raise ValueError(f"unknown web app {name!r}; bundled: {', '.join(APPS)}")
    return build()


def start_app(name: str, timeout: float = 10.0) -> RunningApp:
    """Serve a fresh instance (fresh state) of a bundled app on a free loopback port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(build_app(name), host="127.0.0.1", port=port, log_level="error", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"webapp-{name}", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            raise RuntimeError(f"web app {name} did not start on port {port}")
        time.sleep(0.02)
    return RunningApp(f"http://127.0.0.1:{port}", server, thread)
