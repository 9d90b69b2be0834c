#!/usr/bin/env python3
"""Resampling quality and speed, Imago against Pillow and libvips.

Quality: every picture is shrunk by 2, 3, 4, 8 and 16 with Imago's
`lanczos3` filter (`imago fetch --resize WxH --filter lanczos3`), Pillow's
`resize(LANCZOS)` and libvips' `resize(kernel="lanczos3")`, and each result is
compared with the same Lanczos3 filter evaluated in float64 on the same
pixels (weights from the filter stretched by the shrink factor, cut at the
edges and normalised, as Pillow defines them; no rounding anywhere). PSNR is
over all channels; SSIM is the mean of the per-channel SSIM (Gaussian window,
sigma 1.5, the usual constants). Imago's default filter (area averaging) is
shown against the same reference for scale: it is a different filter, so its
distance to the Lanczos result is not an error.

Speed: the whole thumbnail path from a PNG or JPEG file (decode and resize),
median of N runs after a warm-up: `imago bench thumbnail` (default and
`--filter lanczos3`) against Pillow's `thumbnail()` (its default: JPEG draft
mode, then `reduce` and bicubic) and `open().resize(LANCZOS)`.

Run through Benchmarks/compare-resampling.
"""
import glob
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("VIPS_CONCURRENCY", "1")

import numpy as np
import pyvips
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IMAGO = os.path.join(ROOT, "Tools", ".build", "release", "imago")
IMAGES = os.path.join(HERE, ".images", "resampling")
ITERATIONS = int(os.environ.get("ITERATIONS", "9"))
FACTORS = [2, 3, 4, 8, 16]

sys.path.insert(0, HERE)
from compare_codecs import photo  # noqa: E402  (the photo-like generator of compare-codecs)


def lanczos3(x):
    x = np.abs(x)
    out = np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    return out


def weights(inp, out):
    """The out x inp matrix of the Lanczos3 resampling of one axis, in float64."""
    scale = inp / out
    stretch = max(scale, 1.0)
    support = 3 * stretch
    matrix = np.zeros((out, inp))
    for i in range(out):
        centre = (i + 0.5) * scale
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), inp)
        xs = np.arange(lo, hi)
        w = lanczos3((xs - centre + 0.5) / stretch)
        matrix[i, lo:hi] = w / w.sum()
    return matrix


def reference(pixels, width, height):
    """`pixels` (H x W x 3, uint8) resampled to width x height in float64, clipped to 0..255."""
    source = pixels.astype(np.float64)
    horizontal = weights(source.shape[1], width)
    vertical = weights(source.shape[0], height)
    channels = [vertical @ (source[..., c] @ horizontal.T) for c in range(source.shape[2])]
    return np.clip(np.stack(channels, axis=-1), 0, 255)


def psnr(result, ref):
    mse = np.mean((result.astype(np.float64) - ref) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255 ** 2 / mse)


def gaussian_blur(plane, sigma=1.5, radius=5):
    xs = np.arange(-radius, radius + 1)
    kernel = np.exp(-(xs ** 2) / (2 * sigma ** 2))
    kernel /= kernel.sum()
    padded = np.pad(plane, radius, mode="reflect")
    rows = np.apply_along_axis(lambda r: np.convolve(r, kernel, mode="valid"), 1, padded)
    return np.apply_along_axis(lambda c: np.convolve(c, kernel, mode="valid"), 0, rows)


def ssim(result, ref):
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    values = []
    for channel in range(3):
        x, y = result[..., channel].astype(np.float64), ref[..., channel]
        mx, my = gaussian_blur(x), gaussian_blur(y)
        sxx = gaussian_blur(x * x) - mx * mx
        syy = gaussian_blur(y * y) - my * my
        sxy = gaussian_blur(x * y) - mx * my
        values.append(np.mean(((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))))
    return float(np.mean(values))


def imago_resize(path, width, height, filter_name, out_dir):
    subprocess.run([IMAGO, "fetch", path, "--output", out_dir, "--resize", f"{width}x{height}", "--filter", filter_name,
                    "--format", "png", "--no-cache"], check=True, capture_output=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    return np.asarray(Image.open(os.path.join(out_dir, stem + ".png")).convert("RGB"))


def pictures(fixtures):
    os.makedirs(IMAGES, exist_ok=True)
    paths = []
    for source in sorted(glob.glob(os.path.join(fixtures, "800px-*.jpg")) + glob.glob(os.path.join(fixtures, "Giunchedi*.jpg"))):
        target = os.path.join(IMAGES, "real-" + os.path.basename(source).split(".")[0][:24].replace("%", "") + ".png")
        if not os.path.exists(target):
            Image.open(source).convert("RGB").save(target)
        paths.append(target)
    for seed in (11, 12):
        target = os.path.join(IMAGES, f"photo-like-12mp-{seed}.png")
        if not os.path.exists(target):
            photo(4000, 3000, seed).save(target, compress_level=1)
        paths.append(target)
    return paths


def timed(work):
    work()
    times = []
    for _ in range(ITERATIONS):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def imago_bench(path, *extra):
    out = subprocess.run([IMAGO, "bench", "thumbnail", "--json", "--iterations", str(ITERATIONS), *extra, path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])["median_ms"]


def main():
    fixtures = sys.argv[1] if len(sys.argv) > 1 else ""
    paths = pictures(fixtures)
    rows = []
    totals = {}
    with tempfile.TemporaryDirectory() as out_dir:
        for path in paths:
            source = np.asarray(Image.open(path).convert("RGB"))
            height, width = source.shape[:2]
            pil_source = Image.fromarray(source)
            vips_source = pyvips.Image.new_from_array(source, interpretation="srgb")
            for factor in FACTORS:
                imago = imago_resize(path, max(1, round(width / factor)), max(1, round(height / factor)), "lanczos3", out_dir)
                h, w = imago.shape[:2]
                ref = reference(source, w, h)
                area = imago_resize(path, w, h, "area", out_dir)
                pillow = np.asarray(pil_source.resize((w, h), Image.Resampling.LANCZOS))
                vips = vips_source.resize(w / width, vscale=h / height, kernel="lanczos3")
                vips = np.ndarray(buffer=vips.write_to_memory(), dtype=np.uint8, shape=[vips.height, vips.width, vips.bands])
                row = {"picture": os.path.basename(path), "size": f"{width}x{height}", "factor": factor, "out": f"{w}x{h}"}
                for name, result in [("imago", imago), ("pillow", pillow), ("pyvips", vips), ("imago_area", area)]:
                    if result.shape[:2] != (h, w):
                        row[name] = None
                        continue
                    row[name] = (psnr(result, ref), ssim(result, ref))
                    totals.setdefault((name, factor), []).append(row[name])
                rows.append(row)
                print(row, flush=True)

    speed = []
    speed_inputs = [p for p in paths if "photo-like" in p][:1]
    jpeg = os.path.join(IMAGES, "photo-like-12mp-11.jpg")
    if not os.path.exists(jpeg):
        Image.open(speed_inputs[0]).save(jpeg, quality=85)
    for path in speed_inputs + [jpeg] + [p for p in paths if "real-" in p][:1]:
        data = open(path, "rb").read()

        def pillow_thumbnail():
            image = Image.open(io.BytesIO(data))
            image.thumbnail((256, 256))

        def pillow_lanczos():
            image = Image.open(io.BytesIO(data))
            ratio = 256 / max(image.size)
            image.resize((max(1, round(image.width * ratio)), max(1, round(image.height * ratio))), Image.Resampling.LANCZOS)

        speed.append({"picture": os.path.basename(path),
                      "imago_default": imago_bench(path, "--max-size", "256"),
                      "imago_lanczos3": imago_bench(path, "--max-size", "256", "--filter", "lanczos3"),
                      "pillow_thumbnail": timed(pillow_thumbnail),
                      "pillow_lanczos": timed(pillow_lanczos)})
        print(speed[-1], flush=True)

    fmt = lambda v: "n/a" if v is None else f"{v[0]:.2f} dB / {v[1]:.5f}"
    lines = ["| picture | size | shrink | Imago lanczos3 | Pillow LANCZOS | pyvips lanczos3 | Imago area (default; another filter) |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['picture']} | {row['size']} | {row['factor']}x ({row['out']}) | {fmt(row['imago'])} | "
                     f"{fmt(row['pillow'])} | {fmt(row['pyvips'])} | {fmt(row['imago_area'])} |")
    summary = ["| shrink | Imago lanczos3 | Pillow LANCZOS | pyvips lanczos3 |", "|---|---|---|---|"]
    for factor in FACTORS:
        cells = []
        for name in ("imago", "pillow", "pyvips"):
            values = totals.get((name, factor), [])
            cells.append("n/a" if not values else f"{np.mean([v[0] for v in values]):.2f} dB / {np.mean([v[1] for v in values]):.5f}")
        summary.append(f"| {factor}x | " + " | ".join(cells) + " |")
    speed_lines = ["| picture | Imago default (area) | Pillow thumbnail() | Imago lanczos3 | Pillow resize(LANCZOS) |",
                   "|---|---|---|---|---|"]
    for s in speed:
        speed_lines.append(f"| {s['picture']} | {s['imago_default']:.2f} ms | {s['pillow_thumbnail']:.2f} ms | "
                           f"{s['imago_lanczos3']:.2f} ms | {s['pillow_lanczos']:.2f} ms |")
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Pillow {Image.__version__}, "
               f"pyvips {pyvips.__version__} (libvips {pyvips.version(0)}.{pyvips.version(1)})")
    with open(os.path.join(HERE, "resampling.md"), "w") as f:
        f.write("# Resampling quality and speed\n\n")
        f.write(f"Written by `Benchmarks/compare-resampling` on {time.strftime('%Y-%m-%d')} ({machine}).\n\n")
        f.write("Each result is compared with the same Lanczos3 filter evaluated in float64 on the same pixels\n"
                "(PSNR over all channels / mean SSIM of the channels; higher is closer). The pictures: the four\n"
                "Wikimedia portraits thumbor ships as test fixtures (800x533 JPEGs, decoded once and saved as PNG)\n"
                "and two photo-like 4000x3000 pictures (`compare_codecs.photo`).\n\n")
        f.write("## Mean over the pictures\n\n" + "\n".join(summary) + "\n\n")
        f.write(f"## Thumbnail speed (256 px, decode included, median of {ITERATIONS})\n\n" + "\n".join(speed_lines) + "\n\n")
        f.write("## Every picture\n\n" + "\n".join(lines) + "\n")
    print("\n".join(summary))
    print("\n".join(speed_lines))


if __name__ == "__main__":
    main()
