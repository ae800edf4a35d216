"""A tiny HTML page builder shared by the bundled apps: accessible markup, escaped text."""

from html import escape

from starlette.responses import HTMLResponse


def page(title: str, body: str, nav: list[tuple[str, str]], status: int = 200) -> HTMLResponse:
    links = " | ".join(f'<a href="{href}">{escape(text)}</a>' for href, text in nav)
    html = (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title></head>"
        f"<body><header><nav aria-label=Main>{links}</nav></header>"
        f"<main><h1>{escape(title)}</h1>{body}</main></body></html>"
    )
    return HTMLResponse(html, status_code=status)


def errors(messages: list[str]) -> str:
    if not messages:
        return ""
    items = "".join(f"<li>{escape(m)}</li>" for m in messages)
    return f"<div role=alert><p>Please fix:</p><ul>{items}</ul></div>"


def e(text) -> str:
    return escape(str(text))
