"""`kind: browser`: headless Chromium on a bundled web `app` (sandboxes/browser.py)."""

from typing import Literal

from trajforge.collectors.environments.base import KINDS, KindSpec, Settings
from trajforge.sandboxes.base import PageCheck, Sandbox


@KINDS.register()
class BrowserSpec(KindSpec):
    kind: Literal["browser"] = "browser"
    app: str
    check_types = (PageCheck,)

    def build(self, settings: Settings) -> Sandbox:
        from trajforge.sandboxes.browser import BrowserEnvironment

        return BrowserEnvironment(app=self.app, timeout=max(settings.command_timeout, 5.0))

    def simulated_action_space(self) -> list[dict]:
        from trajforge.sandboxes.browser import action_space

        return action_space()
