"""A headless Chromium (Playwright) on a bundled local web app: the Web domain.

Observation: the accessibility tree (Playwright's aria snapshot in "ai" mode, whose [ref=eN] references are
stable for a given page) with the URL, title and focused element. Actions, BrowserGym style, as kind `browser`
with the action's name and JSON arguments: click(ref), fill(ref, text), select_option(ref, value),
press(key[, ref]), scroll(direction), goto(url), go_back(). An element may also be named by role and
accessible name instead of ref. Navigation outside the app's origin is blocked and recorded as such; a turn
whose action left the page as it was is flagged no_change.
"""

import json
import re
import shutil
from urllib.parse import urljoin, urlparse

from trajforge.sandboxes.base import InfraError, PageCheck, Sandbox, Task, json_arguments
from trajforge.sandboxes.starting_state import StartingState
from trajforge.sandboxes.webapps import RunningApp, start_app
from trajforge.schemas.records import Action, Observation

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
KEYS = ["Enter", "Tab", "Escape", "ArrowDown", "ArrowUp", "Backspace"]
ACTIONS = {
    "click": {"ref": {"type": "string"}},
    "fill": {"ref": {"type": "string"}, "text": {"type": "string"}},
    "select_option": {"ref": {"type": "string"}, "value": {"type": "string"}},
    "press": {"key": {"type": "string", "enum": KEYS}, "ref": {"type": "string"}},
    "scroll": {"direction": {"type": "string", "enum": ["up", "down"]}},
    "goto": {"url": {"type": "string"}},
    "go_back": {},
}
REQUIRED = {
    "click": ["ref"],
    "fill": ["ref", "text"],
    "select_option": ["ref", "value"],
    "press": ["key"],
    "scroll": ["direction"],
    "goto": ["url"],
    "go_back": [],
}
# Playwright prefixes refs with a per-navigation frame counter (f3e12); observations show the bare ref (e12),
# the same for the same page whatever came before, and actions are mapped back to the current prefix.
REF_PREFIX = re.compile(r"\[ref=(f\d+)?e(\d+)\]")
ELEMENT_TIMEOUT_MS = 3000
FOCUSED_JS = """() => { const el = document.activeElement;
  if (!el || el === document.body) return '';
  const label = el.labels && el.labels.length ? el.labels[0].innerText.trim()
    : (el.getAttribute('aria-label') || el.name || el.innerText || '');
  return `${el.tagName.toLowerCase()} "${label.slice(0, 60)}"`; }"""


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    raise InfraError("no Chromium found: apt-get install chromium (Playwright's own download is not used)")


class BrowserEnvironment(Sandbox):
    name = "browser"

    def __init__(self, app: str, timeout: float = 10.0, allowed_origins: tuple[str, ...] = ()):
        self.app_name = app
        self.name = f"web:{app}"
        self.timeout_ms = int(timeout * 1000)
        self.extra_origins = allowed_origins
        self._pw = self._browser = self._page = None
        self._app: RunningApp | None = None
        self._blocked: list[str] = []
        self._prefix = ""
        # Observations and actions name the app by a fixed origin, not its random port: same episode, same data.
        self.display_origin = f"http://{app}.local"

    def reset(self, task: Task) -> Observation:
        self.close()
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright

        try:
            self._app = start_app(self.app_name)
            self._pw = sync_playwright().start()
            self._browser = self._pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            context = self._browser.new_context(viewport={"width": 1280, "height": 900})
            context.set_default_timeout(ELEMENT_TIMEOUT_MS)
            context.set_default_navigation_timeout(self.timeout_ms)
            context.route("**/*", self._guard)
            self._page = context.new_page()
            self._goto(urljoin(self._app.url, task.config.get("start_path", "/")))
        except (PlaywrightError, RuntimeError) as exc:
            self.close()
            raise InfraError(f"could not start the browser on {self.app_name}: {exc}") from exc
        self._start = self._observe(before=None)
        return self._start

    def starting_state(self, task: Task) -> StartingState:
        """The start page, as the first observation shows it."""
        return StartingState(observation=self._start.content)

    @property
    def origins(self) -> set[str]:  # what the browser may load: the app's real origin, and any extra ones
        return {_origin(self._app.url), *map(_origin, self.extra_origins)}

    def _guard(self, route) -> None:
        """Every request the page makes, and, since Playwright does not route a redirect's next hop, every redirect:
        an allowed request is fetched here without following redirects, and a redirect out is blocked."""
        from playwright.sync_api import Error as PlaywrightError

        url = route.request.url
        if url.startswith(("data:", "about:")):
            route.continue_()
        elif _origin(url) not in self.origins:
            self._blocked.append(url)
            route.abort("blockedbyclient")
        else:
            try:
                response = route.fetch(max_redirects=0, timeout=self.timeout_ms)
            except PlaywrightError:
                route.abort("failed")
                return
            target = urljoin(url, response.headers.get("location", ""))
            if response.status in (301, 302, 303, 307, 308) and _origin(target) not in self.origins:
                self._blocked.append(target)
                route.abort("blockedbyclient")
            else:
                route.fulfill(response=response)

    def _goto(self, url: str) -> None:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self._page.goto(url, wait_until="load")
        except PlaywrightTimeout as exc:
            raise InfraError(f"the page never loaded: {url}", Observation(content=str(exc), is_error=True)) from exc

    def action_space(self) -> list[dict]:
        return action_space()

    def describe(self) -> dict:
        version = self._browser.version if self._browser else None
        return {"name": self.name, "version": version, "backend": "playwright-chromium"}

    def step(self, action: Action) -> Observation:
        from playwright.sync_api import Error as PlaywrightError

        if self._page is None:
            raise RuntimeError("step() before reset()")
        if action.kind != "browser" or action.name not in ACTIONS:
            return Observation(content=f"unknown browser action; use one of {', '.join(ACTIONS)}", is_error=True)
        args = json_arguments(action)
        if args is None:
            return Observation(content="browser action arguments must be a JSON object", is_error=True)
        before = self._settled(self._state)
        self._blocked = []
        try:
            self._apply(action.name, args)
            self._page.wait_for_load_state("load")
        except InfraError:
            raise
        except (PlaywrightError, KeyError, ValueError) as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return self._observe(before, error=f"{action.name} failed: {message}")
        if self._blocked:
            if _origin(self._page.url) not in self.origins:  # a blocked click or redirect leaves Chromium's error page
                self._goto(self._real(before[0]))
            return self._observe(before, error=f"navigation blocked: {self._blocked[0]} is outside the allowed origins")
        return self._observe(before)

    def _apply(self, name: str, args: dict) -> None:
        page = self._page
        if name == "goto":
            base = self._shown(page.url) if page.url.startswith("http") else self.display_origin + "/"
            url = self._real(urljoin(base, str(args["url"])))
            if _origin(url) not in self.origins:
                self._blocked.append(url)
                return
            self._goto(url)
        elif name == "go_back":
            if page.evaluate("history.length") <= 2:  # about:blank, then the start page
                raise ValueError("there is no previous page")
            page.go_back(wait_until="load")
        elif name == "scroll":
            page.mouse.wheel(0, -600 if args["direction"] == "up" else 600)
        elif name == "press":
            (self._element(args) if "ref" in args or "role" in args else page.keyboard).press(args["key"])
        elif name == "click":
            self._element(args).click()
        elif name == "fill":
            self._element(args).fill(args["text"])
        elif name == "select_option":
            self._element(args).select_option(args["value"])

    def _element(self, args: dict):
        if "ref" in args:
            ref = str(args["ref"])
            if re.fullmatch(r"e\d+", ref):
                ref = self._prefix + ref
            locator = self._page.locator(f"aria-ref={ref}")
        elif "role" in args:
            locator = self._page.get_by_role(args["role"], name=args.get("name"), exact=True)
        else:
            raise KeyError("give the element's ref (or role and name)")
        if locator.count() == 0:
            raise ValueError(f"no element {args.get('ref') or args.get('name')!r} on this page")
        return locator.first

    def _shown(self, url: str) -> str:
        return url.replace(self._app.url, self.display_origin, 1) if url.startswith(self._app.url) else url

    def _real(self, url: str) -> str:
        return url.replace(self.display_origin, self._app.url, 1) if url.startswith(self.display_origin) else url

    def _state(self) -> tuple[str, str]:
        snapshot = self._page.aria_snapshot(mode="ai")
        found = REF_PREFIX.search(snapshot)
        self._prefix = (found.group(1) or "") if found else ""
        return self._shown(self._page.url), REF_PREFIX.sub(r"[ref=e\2]", snapshot).replace(
            self._app.url, self.display_origin
        )

    def _settled(self, read):
        """Read the page; when a navigation the action started lands mid-read, wait for it and read again."""
        from playwright.sync_api import Error as PlaywrightError

        for attempt in range(4):
            try:
                return read()
            except PlaywrightError as exc:
                if attempt == 3 or not any(m in str(exc) for m in ("context was destroyed", "navigat")):
                    raise
                self._page.wait_for_load_state("load")

    def _observe(self, before: tuple[str, str] | None, error: str | None = None) -> Observation:
        url, snapshot = self._settled(self._state)
        title = self._settled(self._page.title)
        focused = self._settled(lambda: self._page.evaluate(FOCUSED_JS))
        header = f"URL: {url}\nTitle: {title}\nFocused: {focused or 'none'}\n"
        if error:
            header = f"Error: {error}\n" + header
        meta = {"url": url, "title": title, "focused": focused}
        if before is not None:
            meta["no_change"] = before == (url, snapshot)
        if self._blocked:
            meta["blocked"] = self._blocked[:5]
        return Observation(
            content=header + snapshot, format="aria", is_error=error is not None, metadata=json.dumps(meta)
        )

    def check(self, task: Task) -> bool | None:
        """A PageCheck, on the current page."""
        if not isinstance(check := task.check, PageCheck):
            return None
        url, snapshot = self._settled(self._state)
        return check.url_contains in url and check.contains in snapshot

    def close(self) -> None:
        for closer in (lambda: self._browser.close(), lambda: self._pw.stop(), lambda: self._app.stop()):
            try:
                closer()
            except Exception:  # noqa: BLE001,S110 - closing what may already be gone
                pass
        self._pw = self._browser = self._page = self._app = None


def action_space() -> list[dict]:
    """The browser's actions as tool schemas (the same for every app and page)."""
    return [
        {
            "name": name,
            "description": f"browser action {name}",
            "input_schema": {
                "type": "object",
                "properties": props,
                "required": REQUIRED[name],
                "additionalProperties": False,
            },
        }
        for name, props in ACTIONS.items()
    ]


def browser_actions_in(action_space: list[dict]) -> frozenset[str]:
    """The browser's action names when `action_space` is the browser's (a tool call so named is a browser action),
    else none."""
    names = {tool.get("name") for tool in action_space}
    return frozenset(ACTIONS) if names >= ACTIONS.keys() else frozenset()


def _origin(url: str) -> str:
    parts = urlparse(url)
    return f"{parts.scheme}://{parts.netloc}"
