#!/usr/bin/env python3
"""The demo page that `make run` writes (test/demo.sh): well-formed, complete and self-contained.

    python3 test/check_page.py PAGE [--hybrid]

Prints one line per check ("ok   ..." or "FAIL ..."); exits 1 if one failed. Well-formed: the page
parses as XML (demo.sh writes XHTML-compatible markup). Complete: every section and figure of the story
is there (--hybrid: the hybrid's too), every figure holds a drawn SVG and a caption with the gna
command that made it, every table cell holds a number or a name, no "nan". Self-contained: no
script, no link, frame, image or object element, no src or href attribute, no url() or @import in CSS,
no http(s) address but the SVG namespace's.
"""
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
SECTIONS = ["task", "llama", "ablation", "ssm", "mmlu", "summary"]
FIGURES = ["llama-maps", "llama-curve", "ssm-maps", "ssm-curve"]
failed = 0


def check(ok, what, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + "demo page: " + what + ("" if ok or not detail else f"\n     {detail}"))
    failed += not ok


def main():
    path, hybrid = sys.argv[1], "--hybrid" in sys.argv[2:]
    sections, figures = SECTIONS + ["hybrid"] * hybrid, FIGURES + ["hybrid-curve", "hybrid-maps"] * hybrid
    text = open(path, encoding="utf-8").read()
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        check(False, "well-formed (XML)", str(e))
        return
    check(True, "well-formed (XML)")
    ids = {e.get("id"): e for e in root.iter() if e.get("id")}
    missing = [s for s in sections + figures if s not in ids]
    check(not missing, f"{len(sections)} sections and {len(figures)} figures present", f"missing: {missing}")
    bad_figures = []
    for name in figures:
        figure = ids.get(name)
        if figure is None:
            continue
        drawn = [svg for svg in figure.iter(f"{SVG}svg") if sum(1 for _ in svg.iter()) > 20 and svg.get("viewBox")]
        caption = figure.find("figcaption")
        command = caption.find("code").text if caption is not None and caption.find("code") is not None else ""
        if not drawn or not command.startswith("gna "):
            bad_figures.append(name)
    check(not bad_figures, "every figure: a drawn, scalable SVG and the gna command that made it", f"{bad_figures}")
    cells = [("".join(td.itertext())).strip() for td in root.iter("td")]
    empty = [c for c in cells if not c or c.lower() == "nan"]
    check(cells and not empty and "nan" not in text.lower().replace("nanmax", ""), f"{len(cells)} table cells, none empty or nan",
          f"{len(empty)} empty or nan")
    banned = [e.tag for e in root.iter() if e.tag.split("}")[-1] in ("script", "link", "iframe", "img", "object", "embed")]
    attributes = [f"{e.tag} {a}" for e in root.iter() for a in e.attrib if a.split("}")[-1] in ("src", "href")]
    addresses = [m for m in re.findall(r"https?://[^\s\"'<>]*", text) if m != "http://www.w3.org/2000/svg"]
    css = [m for m in ("url(", "@import") if m in text]
    check(not (banned or attributes or addresses or css), "self-contained: no script, link, src, href, url(), @import or address",
          f"elements {banned[:3]}, attributes {attributes[:3]}, addresses {addresses[:3]}, css {css}")


main()
sys.exit(1 if failed else 0)
