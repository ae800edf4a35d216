"""A shop: products with search, a server-side cart, checkout with validation, order confirmation."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from trajforge.sandboxes.webapps import WEB_APPS
from trajforge.sandboxes.webapps.html import e, errors, page

PRODUCTS = {
    "mug": ("Enamel mug", 12.0),
    "lamp": ("Desk lamp", 35.5),
    "notebook": ("Dotted notebook", 8.25),
    "kettle": ("Steel kettle", 42.0),
    "socks": ("Wool socks", 9.9),
}
SHIPPING = {"standard": 4.0, "express": 12.0}
NAV = [("/", "Products"), ("/cart", "Cart")]


@WEB_APPS.register("shop")
def build() -> Starlette:
    cart: dict[str, int] = {}
    orders: list[dict] = []

    def total() -> float:
        return round(sum(PRODUCTS[k][1] * n for k, n in cart.items()), 2)

    async def home(request: Request):
        q = request.query_params.get("q", "").strip().lower()
        found = [(k, v) for k, v in PRODUCTS.items() if q in v[0].lower()]
        rows = "".join(
            f"<li><article aria-label='{e(name)}'><h2>{e(name)}</h2><p>{price:.2f} EUR</p>"
            f"<form method=post action=/cart/add><input type=hidden name=sku value={sku}>"
            f"<label>Quantity <input name=qty type=number value=1 min=1 max=9></label>"
            f"<button>Add {e(name)} to cart</button></form></article></li>"
            for sku, (name, price) in found
        )
        search = f"<form role=search action=/><label>Search products <input name=q value='{e(q)}'></label><button>Search</button></form>"
        body = (
            search
            + (f"<ul>{rows}</ul>" if rows else "<p>No products match.</p>")
            + f"<p>Cart: {sum(cart.values())} items</p>"
        )
        return page("Products", body, NAV)

    async def add(request: Request):
        form = await request.form()
        sku, qty = form.get("sku"), form.get("qty", "1")
        if sku not in PRODUCTS or not str(qty).isdigit() or not 1 <= int(qty) <= 9:
            return page("Products", errors(["Choose a product and a quantity from 1 to 9."]), NAV, 400)
        cart[sku] = min(9, cart.get(sku, 0) + int(qty))
        return RedirectResponse("/cart", status_code=303)

    async def view_cart(request: Request):
        if not cart:
            return page("Cart", "<p>Your cart is empty.</p><a href=/>Continue shopping</a>", NAV)
        rows = "".join(
            f"<tr><td>{e(PRODUCTS[k][0])}</td><td>{n}</td><td>{PRODUCTS[k][1] * n:.2f}</td>"
            f"<td><form method=post action=/cart/remove><input type=hidden name=sku value={k}>"
            f"<button>Remove {e(PRODUCTS[k][0])}</button></form></td></tr>"
            for k, n in sorted(cart.items())
        )
        table = f"<table><thead><tr><th>Product</th><th>Qty</th><th>Price</th><th></th></tr></thead><tbody>{rows}</tbody></table>"
        return page("Cart", f"{table}<p>Total: {total():.2f} EUR</p><a href=/checkout>Proceed to checkout</a>", NAV)

    async def remove(request: Request):
        form = await request.form()
        cart.pop(form.get("sku"), None)
        return RedirectResponse("/cart", status_code=303)

    async def checkout(request: Request):
        problems, values = [], {"name": "", "address": "", "shipping": "standard"}
        if request.method == "POST":
            form = await request.form()
            values = {k: str(form.get(k, "")).strip() for k in values}
            if not cart:
                problems.append("Your cart is empty.")
            if len(values["name"]) < 2:
                problems.append("Name is required.")
            if len(values["address"]) < 5:
                problems.append("Address is required (at least 5 characters).")
            if values["shipping"] not in SHIPPING:
                problems.append("Choose a shipping method.")
            if not problems:
                order = {
                    "id": len(orders) + 1,
                    "items": dict(cart),
                    "total": round(total() + SHIPPING[values["shipping"]], 2),
                    **values,
                }
                orders.append(order)
                cart.clear()
                return RedirectResponse(f"/order/{order['id']}", status_code=303)
        options = "".join(
            f"<option value={k} {'selected' if values['shipping'] == k else ''}>{k} ({v:.2f} EUR)</option>"
            for k, v in SHIPPING.items()
        )
        form_html = (
            f"{errors(problems)}<form method=post action=/checkout>"
            f"<label>Full name <input name=name value='{e(values['name'])}'></label>"
            f"<label>Address <input name=address value='{e(values['address'])}'></label>"
            f"<label>Shipping <select name=shipping>{options}</select></label>"
            f"<button>Place order</button></form><p>Subtotal: {total():.2f} EUR</p>"
        )
        return page("Checkout", form_html, NAV, 400 if problems else 200)

    async def order(request: Request):
        number = int(request.path_params["number"])
        if not 1 <= number <= len(orders):
            return page("Not found", "<p>No such order.</p>", NAV, 404)
        o = orders[number - 1]
        items = ", ".join(f"{n} x {PRODUCTS[k][0]}" for k, n in sorted(o["items"].items()))
        return page(
            f"Order {number} confirmed",
            f"<p>Thank you, {e(o['name'])}.</p><p>{e(items)}</p><p>Total: {o['total']:.2f} EUR</p>",
            NAV,
        )

    return Starlette(
        routes=[
            Route("/", home),
            Route("/cart", view_cart),
            Route("/cart/add", add, methods=["POST"]),
            Route("/cart/remove", remove, methods=["POST"]),
            Route("/checkout", checkout, methods=["GET", "POST"]),
            Route("/order/{number:int}", order),
        ]
    )
