"""The HTML page shell shared by the class report and the feedback pages."""

from __future__ import annotations

import html

from autograder.printable import printable

CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; max-width: 70rem; margin: 2rem auto;
       padding: 0 1rem; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .92rem; }
th, td { border: 1px solid #ddd; padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f6; } td.num { text-align: right; white-space: nowrap; }
pre { background: #f6f8fa; padding: .6rem; overflow-x: auto; white-space: pre-wrap; font-size: .88rem; }
.pass { color: #1a7f37; } .fail { color: #cf222e; } .muted { color: #666; } .warn { color: #9a6700; }
.cause { border-left: 3px solid #cf222e; padding-left: .8rem; margin: .5rem 0 1rem; }
.score { font-size: 1.3rem; font-weight: 600; } img { max-width: 100%; }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; } .card { border: 1px solid #ddd; border-radius: .4rem;
padding: .5rem .9rem; } .card b { display: block; font-size: 1.3rem; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort=ascending]::after { content: " \\25B2"; }
table.sortable th[aria-sort=descending]::after { content: " \\25BC"; }
.flag { display: inline-block; border-radius: .3rem; padding: 0 .35rem; margin: 0 .15rem .1rem 0; font-size: .8rem;
        background: #fff1c2; } .flag.blank { background: #e8e8ee; }
.flag.duplicate, .flag.similar { background: #ffd6d6; }
.flag.late { background: #dbeafe; } .partial { background: #fff1c2; padding: .5rem .8rem; border-radius: .4rem; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; } .pair pre { max-height: 32rem; overflow: auto; }
.mark { display: inline-block; position: relative; width: 1em; height: 1em; border-radius: 50%;
        vertical-align: -.15em; background: #cf222e; }
.mark::before, .mark::after { content: ""; position: absolute; background: #fff; }
.mark.fail::before, .mark.fail::after { left: .44em; top: .2em; width: .12em; height: .6em; transform: rotate(45deg); }
.mark.fail::after { transform: rotate(-45deg); }
.mark.pass { background: #1a7f37; } .mark.pass::before { display: none; }
.mark.pass::after { left: .36em; top: .16em; width: .22em; height: .48em; background: none; border: solid #fff;
                    border-width: 0 .12em .12em 0; transform: rotate(45deg); }
.mark.warn { background: #9a6700; border-radius: .15em; } .mark.warn::before { left: .44em; top: .18em; width: .12em;
             height: .42em; } .mark.warn::after { left: .44em; top: .68em; width: .12em; height: .12em; }
.mark.muted { background: #8c959f; } .mark.muted::before { left: .2em; top: .44em; width: .6em; height: .12em; }
.mark.muted::after { display: none; }
table.summary { width: auto; } details { margin: .3rem 0 1rem; } summary { cursor: pointer; color: #1a7f37; }
code { background: #f0f1f3; padding: 0 .2em; border-radius: .2em; font-size: .92em; }
mark { background: #ffe08a; } .wide { overflow-x: auto; } td.flags { min-width: 9rem; }
"""


def esc(s: object) -> str:
    """Text as HTML: markup escaped, control characters and lone surrogates shown as escapes."""
    return html.escape(printable(s, lines=True))


def page(title: str, body: str, script: str = "") -> str:
    """A whole, self-contained HTML page (inline CSS and script, no external resources)."""
    js = f"<script>{script}</script>" if script else ""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>{CSS}</style></head>"
            f"<body>\n{body}\n{js}</body></html>\n")
