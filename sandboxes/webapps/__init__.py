"""Local web apps with server-side state for the Web domain, each served on 127.0.0.1 for one episode. An app is
one module of this package whose `build()` (a fresh Starlette app) registers itself: `@WEB_APPS.register(NAME)`."""

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn

from trajforge.schemas.registry import Registry

WEB_APPS = Registry("web app", package=__name__)  # name -> build(), a fresh app with fresh state


@dataclass
class RunningApp:
    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)


def build_app(name: str):
    return WEB_APPS.get(name)()


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
