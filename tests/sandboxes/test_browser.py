"""The browser environment driving a real headless Chromium on the bundled web apps."""

import json
import shutil
import socket
import threading

import pytest

from sandboxes.base import InfraError, Task
from sandboxes.browser import BrowserEnvironment
from schemas.records import Action

pytestmark = pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")


def act(env, action, /, **args):
    return env.step(Action(kind="browser", name=action, content=json.dumps(args)))


def meta(observation) -> dict:
    return json.loads(observation.metadata)


@pytest.fixture
def shop():
    env = BrowserEnvironment("shop", timeout=5)
    yield env
    env.close()


def test_snapshot_has_stable_refs_and_anchors(shop):
    first = shop.reset(Task(id="t", instruction="x"))
    assert first.format == "aria"
    assert first.content.startswith("URL: http://shop.local/\nTitle: Products\nFocused: none\n")
    assert 'button "Add Enamel mug to cart" [ref=e20]' in first.content
    shop.close()  # one Playwright per thread: a fresh app, browser and port, the same observation
    assert shop.reset(Task(id="t", instruction="x")).content == first.content


def test_cart_and_checkout_keep_server_state(shop):
    shop.reset(Task(id="t", instruction="x"))
    cart = act(shop, "click", ref="e20")
    assert meta(cart)["url"] == "http://shop.local/cart" and "Total: 12.00 EUR" in cart.content
    assert "[ref=e1]" in cart.content and "[ref=f" not in cart.content  # refs shown without the frame prefix
    act(shop, "click", role="link", name="Proceed to checkout")
    invalid = act(shop, "click", role="button", name="Place order")
    assert "Name is required." in invalid.content and not invalid.is_error
    act(shop, "fill", role="textbox", name="Full name", text="Ada")
    filled = act(shop, "fill", role="textbox", name="Address", text="1 Engine Street")
    assert meta(filled)["focused"] == 'input "Address"'
    act(shop, "select_option", role="combobox", name="Shipping", value="express")
    done = act(shop, "click", role="button", name="Place order")
    assert meta(done)["title"] == "Order 1 confirmed" and "Total: 24.00 EUR" in done.content


def test_blocked_navigation_no_change_and_bad_refs(shop):
    shop.reset(Task(id="t", instruction="x"))
    blocked = act(shop, "goto", url="https://elsewhere.example/")
    assert blocked.is_error and "navigation blocked: https://elsewhere.example/" in blocked.content
    assert meta(blocked)["no_change"] is True and meta(blocked)["blocked"] == ["https://elsewhere.example/"]
    missing = act(shop, "click", ref="e999")
    assert missing.is_error and "no element 'e999'" in missing.content
    assert meta(act(shop, "scroll", direction="down"))["no_change"] is True
    assert act(shop, "go_back").is_error  # nothing to go back to
    moved = act(shop, "goto", url="/cart")
    assert meta(moved)["no_change"] is False and "Your cart is empty." in moved.content
    assert act(shop, "teleport").is_error


def test_success_check(shop):
    task = Task(id="t", instruction="x", check=json.dumps({"url_contains": "/cart", "contains": "Enamel mug"}))
    shop.reset(task)
    assert shop.check(task) is False
    act(shop, "click", ref="e20")
    assert shop.check(task) is True


def test_a_page_that_never_loads_is_an_infra_error():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()  # accept, never answer
    env = BrowserEnvironment("wiki", timeout=2, allowed_origins=(f"http://127.0.0.1:{port}",))
    try:
        env.reset(Task(id="t", instruction="x"))
        with pytest.raises(InfraError, match="the page never loaded"):
            act(env, "goto", url=f"http://127.0.0.1:{port}/")
    finally:
        env.close()
        listener.close()
