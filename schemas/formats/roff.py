"""Manual pages (man(7) roff, as Debian ships them under /usr/share/man) rendered to plain text, in Python.

Not a roff implementation: it keeps the words and the structure (section headings, paragraphs, option lists,
no-fill blocks) and drops formatting, which is what a CPT document needs. Deterministic and dependency-free,
so the same page gives the same text on every machine, whether or not groff is installed."""

import re

# Named glyphs \(xx and \[xxx] that carry meaning in text; any other becomes nothing.
GLYPHS = {
    "em": "--", "en": "-", "hy": "-", "mi": "-", "aq": "'", "dq": '"', "lq": '"', "rq": '"', "oq": "'",
    "cq": "'", "co": "(c)", "rg": "(R)", "tm": "(TM)", "bu": "*", "ga": "`", "ti": "~", "ha": "^",
    "rs": "\\", "sl": "/", "lh": "<=", "rh": "=>", "<=": "<=", ">=": ">=", "->": "->", "<-": "<-",
    "mu": "x", "pl": "+", "eq": "=", "ba": "|", "br": "|", "fo": "<", "fc": ">", "Fo": "<<", "Fc": ">>",
}  # fmt: skip
ESCAPE = re.compile(
    r"\\(?:"
    r"\((?P<glyph2>..)|\[(?P<glyph>[^\]]*)\]"  # glyphs
    r"|f(?:\[[^\]]*\]|\(..|.)"  # font changes
    r"|s[+-]?\d+|s\(\d\d|s\[[^\]]*\]"  # size changes
    r"|\*(?:\[[^\]]*\]|\(..|.)"  # strings
    r"|n(?:\[[^\]]*\]|\(..|.)"  # number registers
    r"|[hvwlLDoxbkSR]'[^']*'"  # motions and drawing
    r"|(?P<char>.)"  # anything else: \- \e \& \, \/ \| \^ \space ...
    r")"
)
CHARS = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t", "'": "'", "`": "`", ".": "."}
HEADINGS = {"SH", "SS"}
BREAKS = {"PP", "LP", "P", "TP", "IP", "HP", "sp", "br", "RS", "RE", "TQ", "ns", "Sp"}
FONT_MACROS = {"B", "I", "SM", "SB", "BI", "BR", "IB", "IR", "RB", "RI", "CW", "UR", "MT"}


def _unescape(text: str) -> str:
    def one(match: re.Match) -> str:
        glyph = match.group("glyph2") or match.group("glyph")
        if glyph is not None:
            return GLYPHS.get(glyph, "")
        char = match.group("char")
        return CHARS.get(char, "") if char is not None else ""

    return ESCAPE.sub(one, text)


def _arguments(rest: str) -> list[str]:
    """A macro's arguments: words, or double-quoted strings."""
    return [
        a[1:-1] if a.startswith('"') and a.endswith('"') and len(a) > 1 else a for a in re.findall(r'"[^"]*"|\S+', rest)
    ]


def render_man(source: str) -> str:
    """The text of a man page: headings on their own lines, paragraphs joined, no-fill blocks kept as is."""
    out: list[str] = []
    paragraph: list[str] = []
    fill = True
    skip_until: str | None = None  # inside a macro definition (until "..") or a conditional block (until "\\}")

    def flush() -> None:
        if paragraph:
            out.append(" ".join(paragraph) if fill else "\n".join(paragraph))
            paragraph.clear()

    for raw in source.replace("\r\n", "\n").split("\n"):
        if skip_until is not None:
            if raw.strip() == skip_until or (skip_until == "\\}" and "\\}" in raw):
                skip_until = None
            continue
        if raw.startswith(('.\\"', "'\\\"", '.\\"')) or raw.strip() in (".", "'"):
            continue  # comments and empty requests
        if raw.startswith((".", "'")):
            name, _, rest = raw[1:].strip().partition(" ")
            args = _arguments(rest)
            if name in ("de", "de1", "am", "ig"):
                skip_until = ".."
            elif name in ("if", "ie", "el"):  # conditional output (troff vs nroff): the words are in the page anyway
                if "\\{" in rest and "\\}" not in rest:
                    skip_until = "\\}"
            elif name == "TH":
                title = f"{args[0]}({args[1]})" if len(args) > 1 else (args[0] if args else "")
                out.append(_unescape(title))
            elif name in HEADINGS:
                flush()
                out.append(_unescape(" ".join(args)).upper() if name == "SH" else _unescape(" ".join(args)))
            elif name in BREAKS:
                flush()
                if name in ("IP", "HP") and args:
                    paragraph.append(_unescape(args[0]))
                    flush()
            elif name in ("nf", "EX"):
                flush()
                fill = False
            elif name in ("fi", "EE"):
                flush()
                fill = True
            elif name in FONT_MACROS:
                joiner = " " if name in ("B", "I", "SM", "SB", "CW", "UR", "MT") else ""
                text = _unescape(joiner.join(args))
                if text:
                    paragraph.append(text)
            # any other request (.ad, .nh, .de, .ds, .so, .in, .ti, .ft, ...) carries no words
            continue
        text = _unescape(raw).rstrip()
        if text or not fill:
            paragraph.append(text)
        else:
            flush()
    flush()
    return "\n\n".join(block.strip("\n") for block in out if block.strip()) + "\n"
