#!/usr/bin/env python3
"""Writes the fuzz seed corpora Fuzz/seeds/{url,svg,css}/ from the server's
tests (Tools/Tests/ImagoServerTests) and the hand-written seeds below.

    python3 Fuzz/seeds/extract.py      # from the repository's root

Seeds are named by the SHA-1 of their content (as libFuzzer names its
corpus), so running it again only adds what is new.
"""
import glob, hashlib, html, json, os, re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(ROOT, "Tools/Tests/ImagoServerTests")
OUT = os.path.join(ROOT, "Fuzz/seeds")
SOURCE = "http%3A%2F%2Fx%2Fa.png"

def write(kind, text):
    data = text.encode("utf-8") if isinstance(text, str) else text
    if not data or len(data) > 16384:
        return
    folder = os.path.join(OUT, kind)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)

# --- URL paths ---------------------------------------------------------------
urls = set()
with open(os.path.join(TESTS, "Fixtures/imgproxy-builder-urls.json")) as f:
    for case in json.load(f)["cases"]:
        urls.add(case["path"])
with open(os.path.join(TESTS, "Fixtures/imgproxy-geometry-cases.json")) as f:
    for key, value in json.load(f).items():
        if isinstance(value, list):
            for case in value:
                if isinstance(case, list) and case and isinstance(case[0], str):
                    urls.add("/insecure/%s/plain/%s" % (case[0], SOURCE))
option = re.compile(r'^(?:[a-z_]+:[^\s"\\/]*)(?:/[a-z_]+:[^\s"\\/]*)*$')
for path in glob.glob(os.path.join(TESTS, "*.swift")):
    text = open(path).read()
    for literal in re.findall(r'"((?:[^"\\\n]|\\.)*)"', text):
        literal = re.sub(r'\\\([^)]*\)', "rs:fit:10:10", literal)
        if literal.startswith(("/insecure/", "/info/")) and "\\" not in literal:
            urls.add(literal)
        elif option.match(literal) and not literal.startswith(("http", "https", "data", "file", "s3")):
            urls.add("/insecure/%s/plain/%s" % (literal, SOURCE))
# imgproxy's documented examples and a few by hand.
urls.update([
    "/insecure/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png",
    "/insecure/resize:fill:300:400:0/gravity:sm/plain/http://example.com/images/curiosity.jpg@png",
    "/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png",
    "/insecure/width:300/height:400/quality:80/plain/local:///images/cat.jpg",
    "/info/insecure/plain/http://example.com/a.jpg",
    "/insecure/info/rs:fit:10:10/plain/http%3A%2F%2Fexample.com%2Fa.jpg",
    "/insecure/pr:thumb:big/plain/http://example.com/a.jpg@webp",
    "/insecure/thumb:webp/plain/http://example.com/a.jpg",
    "/insecure/preset:loop/preset:pair/plain/http://example.com/a.jpg",
    "/insecure/wm:0.5:soea:10:10:0.2/plain/http://example.com/a.jpg",
    "/insecure/wm:1:re:0:0:1/t:10:ff00ff:1:0/pd:10:20/plain/http://example.com/a.jpg",
    "/insecure/ex:1:no:5:5/exar:1:fp:0.5:0.5/c:100:0.5:so/plain/http://example.com/a.jpg",
    "/insecure/z:1.5:2/dpr:2/mw:10/mh:20/rot:-90/fl:1:0/bg:255:0:10/mrd:500/plain/http://example.com/a.jpg",
    "/insecure/sh:0.5/pix:4/fq:jpeg:80:webp:70/mb:1000/cb:v1/exp:1700000000/plain/http://example.com/a.jpg",
    "/insecure/fn:bXkgZmlsZQ:1/att:1/skp:jpg:svg/raw:0/ar:0/sm:0/kcr:0/scp:0/q:90/bl:3/plain/http://example.com/a.jpg",
    "/insecure/fn:my%20photo/plain/s3://bucket/key.png@avif",
    "/insecure/f:svg/plain/http%3A%2F%2Fx%2Fa.svg@png",
    "/insecure/raw:1/plain/http%3A%2F%2Fx%2Fa.png",
    "/insecure/g:ce:-10.5:1e2/plain/http://user:pass@example.com:8080/a%20b.png?x=1&y=2#frag",
    "/insecure/aHR0cDovL2V4YW1wbGUuY29tL2EuanBn.jxl",
    "/insecure/aHR0cDovL2V4YW1wbGUuY29tL2EuanBn",
])
for url in urls:
    write("url", url)

# --- SVG documents -----------------------------------------------------------
svgs = []
for path in sorted(glob.glob(os.path.join(TESTS, "Fixtures/hostile-svg/*.svg"))):
    svgs.append(open(path).read().replace("{{LEAK}}", "http://leak.test"))
for path in glob.glob(os.path.join(TESTS, "*.swift")):
    text = open(path).read()
    for block in re.findall(r'#"""\n(.*?)\n\s*"""#', text, re.S):
        if "<svg" in block:
            block = "\n".join(line.strip() for line in block.split("\n"))
            svgs.append(re.sub(r'\\#\([^)]*\)', "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", block))
    for literal in re.findall(r'#"(<svg.*?)"#', text):
        if "\\#(" not in literal:
            svgs.append(literal)
NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
svgs += [
    '<svg %s><defs><g id="a"><rect width="1" height="1"/></g><use id="b" href="#a"/><use href="#b"/></defs><use xlink:href="#b"/></svg>' % NS,
    '<svg %s><filter id="f"><feGaussianBlur stdDeviation="5"/><feTurbulence numOctaves="3"/><feConvolveMatrix order="3" kernelMatrix="1 0 0 0 1 0 0 0 1"/></filter><rect filter="url(#f)" style="filter: blur(2px)" width="10" height="10"/></svg>' % NS,
    '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg %s width="10" height="10"><text x="1" y="2">a &amp; b &#13; &#x41;</text><style><![CDATA[ text { fill: red } ]]></style></svg>' % NS,
    '<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:style>a{fill:url(#x)}</s:style><s:a xmlns:x="http://www.w3.org/1999/xlink" x:href="javascript:1"/><s:set attributeName="x:href" to="#y"/></s:svg>',
    '<svg %s><linearGradient id="g"><stop offset="0" stop-color="rgb(1,2,3)"/></linearGradient><rect fill="url(#g)" transform="rotate(45) scale(2)" style="fill: url( &quot;#g&quot; ) !important; stroke: \\75rl(#g)"/></svg>' % NS,
]
for svg in svgs:
    write("svg", svg)

# --- CSS ---------------------------------------------------------------------
css = set()
for svg in svgs:
    for block in re.findall(r'<style[^>]*>(.*?)</style>', svg, re.S):
        css.add(html.unescape(block.replace("<![CDATA[", "").replace("]]>", "")))
    for value in re.findall(r'\sstyle="([^"]*)"', svg):
        css.add(html.unescape(value))
    for value in re.findall(r'\s(?:fill|stroke|filter|mask|clip-path|transform|marker-start|values|to|from)="([^"]*)"', svg):
        if "(" in value or "\\" in value:
            css.add(html.unescape(value))
css.update([
    '@import url(http://evil/a.css); a { fill: red }',
    '@media screen { a { fill: red } } b { stroke: blue }',
    '@font-face { font-family: x; src: url("http://evil/f.woff") } c { fill: #fff }',
    'rect:not(.a) > g + use ~ [id^="x"] *|circle:nth-child(2n+1) { fill: rgb(1 2 3 / 50%) !important; stroke-width: calc(1px + 2em) }',
    'a { fill: url( "#g" ); stroke: url(#h); mask: url(\'#m\'); background: image-set("x" 1x) }',
    'fill: \\75 rl(http://e/x); stroke: u\\72 l(#ok); font-family: "a\\"b", \'c;d\'',
    'fill: var(--x); stroke: env(safe-area-inset-left); x: attr(href url)',
    'a{fill:red}/* } b { fill: url(http://e) } */c{fill:blue}',
    'transform: matrix(1,0,0,1,0,0) translateX(-1.5e2px) rotate(.5turn); opacity: 50%',
    '<!-- a { fill: red } --> b { fill: green }',
    'a { fill: url(#a\\29 ) }',
    'font-family: "unterminated\n; fill: url(http://e)',
    'u\\rl(http://e)',
    'color-mix(in srgb, red 50%, blue)',
    'a[x="]"] { fill: red }',
])
for text in css:
    write("css", text)
print("url %d, svg %d, css %d" % tuple(len(os.listdir(os.path.join(OUT, k))) for k in ("url", "svg", "css")))
