"""A three-step sign-up wizard with validation on every step and a review page; state lives on the server."""

import re

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from trajforge.sandboxes.webapps import WEB_APPS
from trajforge.sandboxes.webapps.html import e, errors, page

PLANS = ("free", "team", "enterprise")
NAV = [("/", "Start"), ("/step/1", "Sign up")]


@WEB_APPS.register("wizard")
def build() -> Starlette:
    data: dict[str, str] = {}
    accounts: list[dict] = []

    async def start(request: Request):
        return page("Welcome", f"<p>{len(accounts)} accounts so far.</p><a href=/step/1>Create an account</a>", NAV)

    async def step1(request: Request):
        problems = []
        if request.method == "POST":
            form = await request.form()
            name, email = str(form.get("name", "")).strip(), str(form.get("email", "")).strip()
            data.update(name=name, email=email)
            if not name:
                problems.append("Name is required.")
            if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", email):
                problems.append("Enter a valid email address.")
            if not problems:
                return RedirectResponse("/step/2", status_code=303)
        body = (
            f"{errors(problems)}<p>Step 1 of 3</p><form method=post>"
            f"<label>Name <input name=name value='{e(data.get('name', ''))}'></label>"
            f"<label>Email <input name=email type=email value='{e(data.get('email', ''))}'></label>"
            f"<button>Next</button></form>"
        )
        return page("Your details", body, NAV, 400 if problems else 200)

    async def step2(request: Request):
        if "email" not in data:
            return RedirectResponse("/step/1", status_code=303)
        problems = []
        if request.method == "POST":
            form = await request.form()
            plan, seats = str(form.get("plan", "")), str(form.get("seats", ""))
            data.update(plan=plan, seats=seats, newsletter="yes" if form.get("newsletter") else "no")
            if plan not in PLANS:
                problems.append("Choose a plan.")
            if not seats.isdigit() or not 1 <= int(seats) <= (1 if plan == "free" else 500):
                problems.append("Seats must be 1 for the free plan, 1 to 500 otherwise.")
            if not problems:
                return RedirectResponse("/step/3", status_code=303)
        options = "<option value=''>Choose...</option>" + "".join(
            f"<option value={p} {'selected' if data.get('plan') == p else ''}>{p}</option>" for p in PLANS
        )
        body = (
            f"{errors(problems)}<p>Step 2 of 3</p><form method=post>"
            f"<label>Plan <select name=plan>{options}</select></label>"
            f"<label>Seats <input name=seats type=number value='{e(data.get('seats', '1'))}'></label>"
            f"<label><input type=checkbox name=newsletter {'checked' if data.get('newsletter') == 'yes' else ''}> Send me the newsletter</label>"
            f"<button>Next</button></form><a href=/step/1>Back</a>"
        )
        return page("Your plan", body, NAV, 400 if problems else 200)

    async def step3(request: Request):
        if "plan" not in data:
            return RedirectResponse("/step/2", status_code=303)
        if request.method == "POST":
            accounts.append(dict(data))
            data.clear()
            return RedirectResponse("/done", status_code=303)
        rows = "".join(f"<dt>{k}</dt><dd>{e(v)}</dd>" for k, v in data.items())
        body = f"<p>Step 3 of 3</p><dl>{rows}</dl><form method=post><button>Create account</button></form><a href=/step/2>Back</a>"
        return page("Review", body, NAV)

    async def done(request: Request):
        last = accounts[-1] if accounts else None
        text = (
            f"<p>Account created for {e(last['email'])} on the {e(last['plan'])} plan.</p>"
            if last
            else "<p>Nothing yet.</p>"
        )
        return page("All set", text, NAV)

    both = ["GET", "POST"]
    return Starlette(
        routes=[
            Route("/", start),
            Route("/step/1", step1, methods=both),
            Route("/step/2", step2, methods=both),
            Route("/step/3", step3, methods=both),
            Route("/done", done),
        ]
    )
