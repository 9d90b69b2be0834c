#!/usr/bin/env python3
"""Compares the AV1 encoders Debian's libavif and libheif offer with Pillow's
bundled libavif, at equal quality: the same SSIM against the source, not the
same "quality" number.

Run through Benchmarks/compare-avif-encoders (it builds the C harness
Benchmarks/raw/avif_encoders.c and sets up the virtual environment); it prints
the tables of Benchmarks/avif-encoders.md and writes them to
Benchmarks/.images/avif-encoders/tables.md (the prose there is by hand).

The pictures are compare_codecs.py's encode source (photo-1mp.jpg, 1152x864,
decoded to RGB) and its 1200x900 graphic (flat colours and strokes). Pillow
encodes each at each quality in PILLOW_QUALITIES and speed 6 (its default;
max_threads=1, its defaults otherwise: 4:2:0, auto-tiling, tune=iq), once more
with tune=ssim; each default file's SSIM is a target. For every candidate
encoder and speed, the harness looks for the lowest quality whose SSIM reaches
the target, then times that setting. SSIM is scikit-image's
structural_similarity over the three RGB channels (data_range 255, 7x7 window)
of the file as Pillow decodes it (libavif with dav1d), against the source.

Timings are medians of ITERATIONS runs after a warm-up, one thread, the harness
pinned to one CPU; "CPU ms" is the user plus system time of the process, which
shared machines disturb less than the wall clock.
"""
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
from PIL import AvifImagePlugin, Image, features
from skimage.metrics import structural_similarity

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_codecs  # noqa: E402  (the photo and the paths)

HERE = compare_codecs.HERE
ROOT = compare_codecs.ROOT
HARNESS = os.path.join(HERE, ".build-raw", "avif_encoders")
WORK = os.path.join(compare_codecs.IMAGES, "avif-encoders")
ITERATIONS = int(os.environ.get("ITERATIONS", "5"))
AvifImagePlugin.DEFAULT_MAX_THREADS = 1

# Pillow's quality settings whose SSIM the other encoders must reach, at its default speed 6.
PILLOW_QUALITIES = [int(q) for q in os.environ.get("PILLOW_QUALITIES", "40,60,80").split(",")]
# Label, harness mode, speeds, encoder options. libavif 0.11 passes aom speeds
# 0-9 as cpu-used (all-intra), rav1e's 0-10 as they are, and clamps SVT-AV1's
# to presets 0-8. "aom:" options go through libheif to aom_codec_set_option.
IMAGO_OPTIONS = ["aom:enable-intrabc=0", "aom:enable-rect-partitions=0"]
CANDIDATES = [
    ("libheif + aom (Imago before)", "libheif-aom", [6, 7, 8, 9], []),
    ("libheif + aom, no intra block copy", "libheif-aom", [6], IMAGO_OPTIONS[:1]),
    ("libheif + aom, no intra block copy or rectangular partitions (Imago now)", "libheif-aom", [6, 7], IMAGO_OPTIONS),
    ("libavif + aom", "libavif-aom", [6], []),
    ("libavif + rav1e", "libavif-rav1e", [10], []),
    ("libavif + SVT-AV1", "libavif-svt", [8], []),
]
if os.environ.get("CANDIDATES"):
    wanted = os.environ["CANDIDATES"].split(",")
    CANDIDATES = [candidate for candidate in CANDIDATES if candidate[1] in wanted]
SOURCES = os.environ.get("SOURCES", "photo,graphic").split(",")


def sources():
    """The pictures, by name: compare_codecs' encode source (photo-1mp.jpg decoded) and its lossless-WebP graphic."""
    os.makedirs(compare_codecs.IMAGES, exist_ok=True)
    os.makedirs(WORK, exist_ok=True)
    if not os.path.exists(compare_codecs.path("photo-1mp.jpg")):   # as compare_codecs.make_images writes it
        compare_codecs.photo(1152, 864, 2).save(compare_codecs.path("photo-1mp.jpg"), quality=90)
    made = {"photo": lambda: Image.open(compare_codecs.path("photo-1mp.jpg")).convert("RGB"),
            "graphic": lambda: compare_codecs.graphic(1200, 900).convert("RGB")}
    for name in SOURCES:
        image = made[name]()
        ppm = os.path.join(WORK, f"{name}.ppm")
        image.save(ppm)
        yield name, image, ppm


def ssim(data, reference):
    decoded = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    return structural_similarity(reference, decoded, channel_axis=2, data_range=255)


def pillow(image, quality, speed, iterations, **options):
    """Pillow's median wall and CPU ms and its file."""
    walls, cpus = [], []
    data = None
    for i in range(iterations + 1):
        buffer = io.BytesIO()
        start, cpu = time.perf_counter(), time.process_time()
        image.save(buffer, "AVIF", quality=quality, speed=speed, max_threads=1, **options)
        if i:
            walls.append((time.perf_counter() - start) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
        data = buffer.getvalue()
    return statistics.median(walls) if walls else 0, statistics.median(cpus) if cpus else 0, data


def harness(mode, ppm, quality, speed, iterations, name="x", options=()):
    out = os.path.join(WORK, f"{name}-{mode}-s{speed}-q{quality}-{len(options)}.avif")
    line = subprocess.run([HARNESS, mode, ppm, str(quality), str(speed), str(iterations), out, *options],
                          check=True, capture_output=True, text=True).stdout
    result = json.loads(line.splitlines()[-1])
    return result["median_ms"], result["cpu_ms"], open(out, "rb").read()


def lowest_quality_reaching(target, encode, reference):
    """The lowest quality 0-100 whose SSIM reaches `target`, by bisection (SSIM grows with quality, nearly always)."""
    low, high = 0, 100
    while low < high:
        middle = (low + high) // 2
        if ssim(encode(middle), reference) >= target:
            high = middle
        else:
            low = middle + 1
    return low


def main():
    rows = []
    for name, image, ppm in sources():
        reference = np.asarray(image)
        for pillow_quality in PILLOW_QUALITIES:
            wall, cpu, data = pillow(image, pillow_quality, 6, ITERATIONS)
            target = ssim(data, reference)
            group = (name, pillow_quality, target)
            rows.append((group, "Pillow", 6, pillow_quality, wall, cpu, len(data), target))
            print(rows[-1], flush=True)
            wall, cpu, data = pillow(image, pillow_quality, 6, ITERATIONS, advanced={"tune": "ssim"})
            rows.append((group, "Pillow, tune=ssim", 6, pillow_quality, wall, cpu, len(data), ssim(data, reference)))
            print(rows[-1], flush=True)
            for label, mode, speeds, options in CANDIDATES:
                for speed in speeds:
                    quality = lowest_quality_reaching(target, lambda q: harness(mode, ppm, q, speed, 0, name, options)[2], reference)
                    wall, cpu, data = harness(mode, ppm, quality, speed, ITERATIONS, name, options)
                    score = ssim(data, reference)
                    label_reached = label if score >= target else label + " (never reaches the SSIM)"
                    rows.append((group, label_reached, speed, quality, wall, cpu, len(data), score))
                    print(rows[-1], flush=True)

    versions = subprocess.run([HARNESS, "versions"], check=True, capture_output=True, text=True).stdout.strip()
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Pillow {Image.__version__} "
               f"(libavif {features.version('avif')}: {AvifImagePlugin._avif.codec_versions()}), {versions}")
    lines = [f"Written by `Benchmarks/compare-avif-encoders` on {time.strftime('%Y-%m-%d')} ({machine}).",
             f"Median of {ITERATIONS} runs after a warm-up.", ""]
    for group in dict.fromkeys(row[0] for row in rows):
        name, pillow_quality, target = group
        lines += [f"{name}, the SSIM of Pillow at quality {pillow_quality}, speed 6: {target:.4f}", "",
                  "| encoder | speed | quality | wall ms | CPU ms | bytes | SSIM |", "|---|---|---|---|---|---|---|"]
        for _, encoder, speed, quality, wall, cpu, size, score in (row for row in rows if row[0] == group):
            lines.append(f"| {encoder} | {speed} | {quality} | {wall:.0f} | {cpu:.0f} | {size:,} | {score:.4f} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(WORK, "tables.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
