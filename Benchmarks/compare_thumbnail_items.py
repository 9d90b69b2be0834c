#!/usr/bin/env python3
"""Times 256-pixel thumbnails of HEIC and AVIF photos with and without a
thumbnail item, Imago against Pillow, and prints the table of
Benchmarks/thumbnail-items.md (the HEIC rows there are from an earlier, quiet run).

    swift build -c release --package-path Tools --product imago
    Benchmarks/.venv/bin/python Benchmarks/compare_thumbnail_items.py   # FORMATS=avif for one

The photo is compare_codecs.py's photo(4000, 3000, 23), written by libheif's
heif-enc (Debian libheif-examples) at quality 60, once with a 320x240
thumbnail item (`-t 320`, as phones write one) and once without; AVIF with
`-A` (libaom), HEIC with x265. Imago: `imago bench thumbnail --max-size 256`,
median of ITERATIONS (7). Pillow: `Image.open(f); im.thumbnail((256, 256))`,
one thread (its AVIF plugin, pillow-heif for HEIC), median of 5 after a warm-up.
"""
import io
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_codecs  # noqa: E402  (the photo, the paths, one thread for Pillow's plugins)
from compare_codecs import Image  # noqa: E402

ITERATIONS = int(os.environ.get("ITERATIONS", "7"))
FORMATS = os.environ.get("FORMATS", "heic,avif").split(",")


def files(fmt):
    """The photo with and without a thumbnail item, written once."""
    names = {True: f"photo-12mp-thumbnail-item.{fmt}", False: f"photo-12mp-no-thumbnail-item.{fmt}"}
    source = compare_codecs.path("photo-12mp-23.png")
    if not os.path.exists(source):
        compare_codecs.photo(4000, 3000, 23).save(source)
    for with_item, name in names.items():
        if not os.path.exists(compare_codecs.path(name)):
            subprocess.run(["heif-enc", *(["-A"] if fmt == "avif" else []), "-q", "60", *(["-t", "320"] if with_item else []),
                            "-o", compare_codecs.path(name), source], check=True, capture_output=True)
    return names


def imago(name):
    out = subprocess.run([compare_codecs.IMAGO, "bench", "thumbnail", "--max-size", "256", "--json", "--iterations", str(ITERATIONS),
                          compare_codecs.path(name)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])["median_ms"]


def pillow(name):
    data = open(compare_codecs.path(name), "rb").read()
    times = []
    for _ in range(6):
        start = time.perf_counter()
        image = Image.open(io.BytesIO(data))
        image.thumbnail((256, 256))
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[1:])


def main():
    os.makedirs(compare_codecs.IMAGES, exist_ok=True)
    peer = {"heic": "Pillow + pillow-heif", "avif": "Pillow (libavif)"}
    print("| file | Imago ms | Pillow ms | Imago / Pillow |")
    print("|---|---|---|---|")
    for fmt in FORMATS:
        for with_item, name in files(fmt).items():
            ours, theirs = imago(name), pillow(name)
            label = f"{fmt.upper()} {'with a 320x240 thumbnail item' if with_item else 'without one'}"
            print(f"| {label} | {ours:.1f} | {theirs:.1f} ({peer[fmt]}) | {ours / theirs:.3f} |", flush=True)


if __name__ == "__main__":
    main()
