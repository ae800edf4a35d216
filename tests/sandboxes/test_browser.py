"""The browser environment driving a real headless Chromium on the bundled web apps."""

import json
import shutil
import socket
import threading

import pytest

from trajforge.sandboxes.base import InfraError, PageCheck, Task
from trajforge.sandboxes.browser import BrowserEnvironment
from trajforge.schemas.records import Action

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
    task = Task(id="t", instruction="x", check=PageCheck(url_contains="/cart", contains="Enamel mug"))
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


@pytest.fixture
def elsewhere_and_probe(monkeypatch):
    """Two real local servers: `elsewhere`, another origin that counts every request it gets, and a `probe` app
    whose page reaches it by a link, a redirect, an <img> and a fetch."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route

    import trajforge.sandboxes.webapps as webapps

    hits: list[str] = []

    async def record(request):
        hits.append(request.url.path)
        return Response("<h1>elsewhere</h1>", media_type="text/html")

    apps = {"elsewhere": Starlette(routes=[Route("/{path:path}", record)])}
    monkeypatch.setattr(webapps, "build_app", apps.__getitem__)
    elsewhere = webapps.start_app("elsewhere")
    far = elsewhere.url

    async def home(request):
        return HTMLResponse(
            "<!doctype html><html><head><title>Probe</title></head><body>"
            f'<a href="{far}/clicked">Leave by link</a> <a href="/go">Leave by redirect</a> '
            '<a href="/gallery">Gallery</a>'
            f"<button onclick=\"fetch('{far}/fetched').catch(() => 0)\">Fetch</button></body></html>"
        )

    async def go(request):
        return RedirectResponse(f"{far}/redirected", status_code=302)

    async def gallery(request):
        return HTMLResponse(f'<!doctype html><title>Gallery</title><img src="{far}/pixel.png" alt="pixel">')

    apps["probe"] = Starlette(routes=[Route("/", home), Route("/go", go), Route("/gallery", gallery)])
    env = BrowserEnvironment("probe", timeout=5)
    env.reset(Task(id="t", instruction="x"))
    yield env, far, hits
    env.close()
    elsewhere.stop()


def test_clicks_redirects_and_subresources_to_another_origin_are_blocked(elsewhere_and_probe):
    env, far, hits = elsewhere_and_probe
    clicked = act(env, "click", role="link", name="Leave by link")
    assert clicked.is_error and f"navigation blocked: {far}/clicked" in clicked.content
    assert meta(clicked)["blocked"] == [f"{far}/clicked"] and meta(clicked)["url"] == "http://probe.local/"
    redirected = act(env, "click", role="link", name="Leave by redirect")
    assert redirected.is_error and f"{far}/redirected" in meta(redirected)["blocked"]
    assert not meta(redirected)["url"].startswith(far)
    gallery = act(env, "click", role="link", name="Gallery")
    assert meta(gallery)["url"] == "http://probe.local/gallery" and meta(gallery)["blocked"] == [f"{far}/pixel.png"]
    act(env, "go_back")
    fetched = act(env, "click", role="button", name="Fetch")
    assert fetched.is_error and meta(fetched)["blocked"] == [f"{far}/fetched"]
    assert hits == []  # the other origin never saw a request
