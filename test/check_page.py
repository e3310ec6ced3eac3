#!/usr/bin/env python3
"""The demo page that `make run` writes (test/demo.sh): well-formed, complete and self-contained.

    python3 test/check_page.py PAGE [--hybrid]     check the page
    python3 test/check_page.py PAGE --self-test    check that broken copies of the page are rejected

Prints one line per check ("ok   ..." or "FAIL ..."); exits 1 if one failed.
Well-formed: the page parses as XML (demo.sh writes XHTML-compatible markup, so an unescaped & or < in
a token label or a number breaks it). Complete: every section of the story is there, in order, and
every figure (--hybrid: the hybrid's too) holds a drawn, scalable SVG, a caption and the gna commands
that made it; the maps have their token labels; with --hybrid, the sweep of the hybrid's attention heads
on letters and the ablation of its top head have their commands; every table cell holds a number or a
name, none nan; the summary table is there. Self-contained: no script, link, frame, image, object or embed element,
no src or href attribute, no http-equiv, no url() or @import in CSS, no http(s) address but the SVG
namespace's. --self-test breaks the page in each of those ways and expects each copy to fail.
"""
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
SECTIONS = ["task", "llama", "ablation", "ssm", "hybrid", "mmlu", "aggregate", "refined", "summary"]
FIGURES = ["mechanism", "llama-maps", "llama-curve", "kv-compare", "ssm-maps", "ssm-critical", "ssm-curve", "mmlu-bars", "agg-map", "agg-bars",
           "refined-bars"]
HYBRID_FIGURES = ["hybrid-curve", "hybrid-maps", "hybrid-critical"]
MAPS = ["llama-maps", "ssm-maps", "ssm-critical", "hybrid-maps", "hybrid-critical"]  # drawn on the short dictionary
DRAWN = ["mechanism"]  # drawn by hand (test/demo_mechanism.svg), with no command
COMMAND = re.compile(r"^\S*gna (attn|kv|mmlu|mc|heads) -q -m \S+ .*")
NAMESPACE = "http://www.w3.org/2000/svg"


def checks(text, hybrid):
    """(what, problem or "") for each check of the page's text"""
    try:
        root = ET.fromstring(re.sub(r"^<!DOCTYPE html>", "", text))
    except ET.ParseError as e:
        return [("well-formed (XML)", str(e))]
    results = [("well-formed (XML)", "")]
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    figures = FIGURES + HYBRID_FIGURES * hybrid
    missing = [i for i in SECTIONS + figures if i not in ids]
    order = [i for i in ids if i in SECTIONS]
    results.append((f"{len(SECTIONS)} sections in order and {len(figures)} figures",
                    f"missing: {missing}" if missing else "" if order == SECTIONS else f"sections in the order {order}"))
    by_id = {e.get("id"): e for e in root.iter() if e.get("id")}
    bad = []
    for name in figures:
        figure = by_id.get(name)
        if figure is None:
            continue
        svgs = [svg for svg in figure.iter(f"{SVG}svg") if svg.get("viewBox") and sum(1 for _ in svg.iter()) > 20]
        caption = "".join(figure.find("figcaption").itertext()).strip() if figure.find("figcaption") is not None else ""
        pre = [p for p in figure.iter("pre") if p.get("class") == "cmd"]
        lines = "".join(pre[0].itertext()).strip().split("\n") if pre else []
        labels = {t.text for svg in svgs for t in svg.iter(f"{SVG}text")}
        if not svgs:
            bad.append(f"{name}: no drawn SVG with a viewBox")
        if not caption:
            bad.append(f"{name}: no caption")
        if not lines or not all(name in DRAWN or COMMAND.match(line) for line in lines):
            bad.append(f"{name}: commands {lines[:2]}")
        if name in MAPS and not {"stone", "88", "\u2423is"} <= labels:
            bad.append(f"{name}: no token labels")
    results.append(("every figure: a drawn, scalable SVG, a caption and the gna commands that made it; the maps' token labels",
                    "; ".join(bad)))
    if hybrid:  # the sweep of the hybrid's attention heads on letters: its commands under its table
        blocks = ["".join(p.itertext()).strip().split("\n") for p in root.iter("pre") if p.get("class") == "cmd"]
        sweep = [b for b in blocks if any(" heads " in x and "--task mmlu" in x and "--heads 'L*A*'" in x for x in b)]
        results.append(("the hybrid's attention heads swept on letters, and the top one ablated on letters, cloze and KV",
                        "no commands" if not sweep else "" if all(any(f"gna {c} " in x and "--mask" in x for x in sweep[0])
                                                                  for c in ("mmlu", "mc", "kv")) else f"commands {sweep[0]}"))
    cells = ["".join(td.itertext()).strip() for td in root.iter("td")]
    empty = sum(1 for c in cells if not c or re.search(r"\bnan\b", c, re.I))
    results.append((f"{len(cells)} table cells, none empty or nan",
                     "no table" if not cells else f"{empty} empty or nan" if empty else ""))
    summary = [p for p in root.iter("pre") if "KV retrieval, 100 pairs" in "".join(p.itertext())]
    results.append(("the summary table", "" if summary else "no pre with the table make run prints"))
    banned = [e.tag.split("}")[-1] for e in root.iter()
              if e.tag.split("}")[-1] in ("script", "link", "iframe", "frame", "img", "image", "object", "embed", "audio", "video")]
    attributes = [f"{e.tag.split('}')[-1]} {a}" for e in root.iter() for a in e.attrib
                  if a.split("}")[-1] in ("src", "href", "srcset", "data", "action", "http-equiv")]
    addresses = [m for m in re.findall(r"(?:https?|ftp|file):/*[^\s\"'<>]*", text) if m != NAMESPACE]
    css = [m for m in ("url(", "@import", "@font-face") if m in text.lower()]
    results.append(("self-contained: no script, link, image, src, href, url(), @import or address",
                    "" if not (banned or attributes or addresses or css) else
                    f"elements {banned[:3]}, attributes {attributes[:3]}, addresses {addresses[:3]}, css {css}"))
    return results


# broken copies of a good page: each must fail
BREAKS = [
    ("a script", lambda t: t.replace("</body>", "<script>alert(1)</script></body>")),
    ("an external image", lambda t: t.replace("</body>", '<img src="https://example.com/a.png"/></body>')),
    ("a link to a style sheet", lambda t: t.replace("</head>", '<link rel="stylesheet" href="s.css"/></head>')),
    ("an address in the text", lambda t: t.replace("</body>", "<p>see http://example.com</p></body>")),
    ("@import in the CSS", lambda t: t.replace("<style>", "<style>@import 'x.css';")),
    ("url() in the CSS", lambda t: t.replace("<style>", "<style>body { background: url(x.png) }")),
    ("an unescaped < in a token label", lambda t: re.sub(r'(<figure id="llama-maps".*?)>stone</text>', r"\1><stone</text>", t, count=1, flags=re.S)),
    ("an unescaped & in a cell", lambda t: re.sub(r"<td>([^<]*)</td>", r"<td>\1 & more</td>", t, count=1)),
    ("an SVG emptied", lambda t: re.sub(r'(<figure id="llama-curve"[^>]*>\s*<svg[^>]*>).*?(</svg>)', r"\1\2", t, count=1, flags=re.S)),
    ("a figure without its command", lambda t: re.sub(r'(<figure id="ssm-maps".*?<pre class="cmd">).*?(</pre>)', r"\1\2", t, count=1, flags=re.S)),
    ("a section missing", lambda t: t.replace('<h2 id="hybrid">', "<h2>")),
    ("the hybrid's letter sweep without its commands", lambda t: re.sub(r"<pre class=\"cmd\">[^<]*--task mmlu[^<]*--heads 'L\*A\*'[^<]*</pre>", "", t)),
    ("a map without token labels", lambda t: re.sub(r'(<figure id="llama-maps".*?</figure>)', lambda m: m.group(1).replace(">stone<", "><"), t, count=1, flags=re.S)),
    ("an empty number", lambda t: re.sub(r"<td>[0-9.]+</td>", "<td></td>", t, count=1)),
    ("a nan", lambda t: re.sub(r"<td>[0-9.]+</td>", "<td>nan</td>", t, count=1)),
]


def main():
    path, options = sys.argv[1], sys.argv[2:]
    text = open(path, encoding="utf-8").read()
    hybrid = "--hybrid" in options or 'id="hybrid-maps"' in text
    failed = 0
    if "--self-test" in options:
        accepted = []
        for what, brk in BREAKS:
            broken = brk(text)
            if broken == text or not any(problem for _, problem in checks(broken, hybrid)):
                accepted.append(what)
        print(("ok   " if not accepted else "FAIL ") + f"demo page: the check rejects {len(BREAKS) - len(accepted)} of "
              f"{len(BREAKS)} broken copies ({', '.join(w for w, _ in BREAKS)})"
              + (f"\n     accepted: {', '.join(accepted)}" if accepted else ""))
        return 1 if accepted else 0
    for what, problem in checks(text, "--hybrid" in options):
        print(("ok   " if not problem else "FAIL ") + "demo page: " + what + (f"\n     {problem}" if problem else ""))
        failed += bool(problem)
    return 1 if failed else 0


sys.exit(main())
