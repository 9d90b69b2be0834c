#!/usr/bin/env python3
"""Times the animated GIF and APNG decodes of compare_codecs.py for two Imago
builds and the peers, taking turns, to compare them in one run on a busy machine.

    Benchmarks/.venv/bin/python Benchmarks/compare_animations.py BEFORE_IMAGO AFTER_IMAGO [ROUNDS]

Each figure is the median, over ROUNDS rounds (7 by default), of a median of 9
runs: `imago bench decode` for each build, compare_codecs.py's vips_decode and
pillow_decode (one thread) for the peers. The inputs are compare_codecs.py's,
made in Benchmarks/.images when missing (Benchmarks/animations.md).
"""
import json
import os
import statistics
import subprocess
import sys

os.environ.setdefault("VIPS_CONCURRENCY", "1")
import compare_codecs as c  # noqa: E402  (after VIPS_CONCURRENCY)


def imago(binary, name):
    out = subprocess.run([binary, "bench", "decode", "--json", "--iterations", "9", c.path(name)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])["median_ms"]


def main():
    before, after = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    os.makedirs(c.IMAGES, exist_ok=True)
    if not os.path.exists(c.path("animation-24f.gif")):
        c.make_gif()
    if not os.path.exists(c.path("animation-24f.png")):
        c.make_apng()
    gif = open(c.path("animation-24f.gif"), "rb").read()
    png = open(c.path("animation-24f.png"), "rb").read()
    work = [
        ("GIF, Imago before", lambda: imago(before, "animation-24f.gif")),
        ("GIF, Imago after", lambda: imago(after, "animation-24f.gif")),
        ("GIF, pyvips", lambda: c.timed(c.vips_decode(gif, True), 9)),
        ("GIF, Pillow", lambda: c.timed(c.pillow_decode(gif), 9)),
        ("APNG, Imago before", lambda: imago(before, "animation-24f.png")),
        ("APNG, Imago after", lambda: imago(after, "animation-24f.png")),
        ("APNG, Pillow", lambda: c.timed(c.pillow_decode(png), 9)),
    ]
    results = {}
    for _ in range(rounds):
        for name, run in work:
            results.setdefault(name, []).append(run())
    for name, times in results.items():
        print(f"| {name} | {statistics.median(times):.2f} ms | {' '.join(f'{t:.1f}' for t in times)} |")


if __name__ == "__main__":
    main()
