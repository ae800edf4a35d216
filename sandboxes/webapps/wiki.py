"""A wiki: pages with links, full-text search, and editing with a required edit summary and a history."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from trajforge.sandboxes.webapps import WEB_APPS
from trajforge.sandboxes.webapps.html import e, errors, page

SEED = {
    "home": ("Home", "Welcome to the team wiki. See [[onboarding]] and [[deploy]]."),
    "onboarding": ("Onboarding", "Day one: get a laptop, read [[deploy]], meet your buddy."),
    "deploy": ("Deploy", "Deploys run every weekday at 10:00. Roll back with the release tool."),
    "oncall": ("On-call", "The on-call rotation changes on Mondays. Escalate to the team lead."),
}
NAV = [("/", "Home"), ("/search", "Search"), ("/new", "New page")]


def render(text: str) -> str:
    out, rest = "", text
    while "[[" in rest and "]]" in rest:
        before, _, after = rest.partition("[[")
        slug, _, rest = after.partition("]]")
        out += e(before) + f'<a href="/page/{e(slug)}">{e(slug)}</a>'
    return out + e(rest)


@WEB_APPS.register("wiki")
def build() -> Starlette:
    pages = {slug: {"title": t, "text": x, "history": ["created"]} for slug, (t, x) in SEED.items()}

    async def home(request: Request):
        items = "".join(f'<li><a href="/page/{s}">{e(p["title"])}</a></li>' for s, p in sorted(pages.items()))
        return page("Team wiki", f"<ul>{items}</ul>", NAV)

    async def view(request: Request):
        slug = request.path_params["slug"]
        if slug not in pages:
            return page(
                "Page not found", f'<p>No page {e(slug)}.</p><a href="/new?slug={e(slug)}">Create it</a>', NAV, 404
            )
        p = pages[slug]
        history = "".join(f"<li>{e(h)}</li>" for h in p["history"])
        body = f'<article><p>{render(p["text"])}</p></article><a href="/edit/{slug}">Edit this page</a><h2>History</h2><ol>{history}</ol>'
        return page(p["title"], body, NAV)

    async def edit(request: Request):
        slug = request.path_params["slug"]
        if slug not in pages:
            return page("Page not found", "<p>No such page.</p>", NAV, 404)
        p, problems = pages[slug], []
        text = p["text"]
        if request.method == "POST":
            form = await request.form()
            text, summary = str(form.get("text", "")), str(form.get("summary", "")).strip()
            if not text.strip():
                problems.append("The page text must not be empty.")
            if not summary:
                problems.append("Describe your change in the edit summary.")
            if not problems:
                p["text"] = text
                p["history"].append(summary)
                return RedirectResponse(f"/page/{slug}", status_code=303)
        body = (
            f"{errors(problems)}<form method=post><label>Text <textarea name=text>{e(text)}</textarea></label>"
            f"<label>Edit summary <input name=summary></label><button>Save</button></form>"
        )
        return page(f"Editing {p['title']}", body, NAV, 400 if problems else 200)

    async def new(request: Request):
        problems, slug, title = [], request.query_params.get("slug", ""), ""
        if request.method == "POST":
            form = await request.form()
            slug, title = str(form.get("slug", "")).strip().lower(), str(form.get("title", "")).strip()
            if not slug.replace("-", "").isalnum():
                problems.append("The address may hold letters, digits and dashes only.")
            elif slug in pages:
                problems.append(f"A page {slug} already exists.")
            if not title:
                problems.append("A title is required.")
            if not problems:
                pages[slug] = {"title": title, "text": str(form.get("text", "")) or "(empty)", "history": ["created"]}
                return RedirectResponse(f"/page/{slug}", status_code=303)
        body = (
            f"{errors(problems)}<form method=post><label>Address <input name=slug value='{e(slug)}'></label>"
            f"<label>Title <input name=title value='{e(title)}'></label><label>Text <textarea name=text></textarea></label>"
            f"<button>Create page</button></form>"
        )
        return page("New page", body, NAV, 400 if problems else 200)

    async def search(request: Request):
        q = request.query_params.get("q", "").strip()
        hits = [
            s
            for s, p in sorted(pages.items())
            if q and (q.lower() in p["text"].lower() or q.lower() in p["title"].lower())
        ]
        results = "".join(f'<li><a href="/page/{s}">{e(pages[s]["title"])}</a></li>' for s in hits)
        body = (
            f"<form role=search><label>Search the wiki <input name=q value='{e(q)}'></label><button>Search</button></form>"
            + (f"<p>{len(hits)} results</p><ul>{results}</ul>" if q else "")
        )
        return page("Search", body, NAV)

    both = ["GET", "POST"]
    return Starlette(
        routes=[
            Route("/", home),
            Route("/page/{slug}", view),
            Route("/edit/{slug}", edit, methods=both),
            Route("/new", new, methods=both),
            Route("/search", search),
        ]
    )
