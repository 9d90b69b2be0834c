#!/usr/bin/env python3
"""Times Imago's codecs against the raw C libraries, Pillow and pyvips, in one
run on this machine, one thread each, and writes a table of ratios.

Run through Benchmarks/compare-codecs (it builds Imago in release mode and sets
up the virtual environment). Every figure is the median of N runs after one
warm-up, in milliseconds; "x raw" and "x Pillow" divide Imago's time by the
other's (below 1.00 means Imago is faster).
"""
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import time

os.environ.setdefault("VIPS_CONCURRENCY", "1")

import numpy as np
import pyvips
from PIL import Image

# One thread everywhere: Pillow's AVIF plugin, pillow-heif and pillow-jxl-plugin
# would otherwise use every core (Imago decodes each image on one thread).
from PIL import AvifImagePlugin
AvifImagePlugin.DEFAULT_MAX_THREADS = 1
try:  # HEIC and JPEG XL for Pillow come as plugins
    import pillow_heif
    pillow_heif.register_heif_opener()
    pillow_heif.options.DECODE_THREADS = 1
    import pillow_jxl  # noqa: F401  (registers the JPEG XL plugin)
    from pillow_jxl import JpegXLImagePlugin
    JpegXLImagePlugin.DECODE_THREADS = 0   # 0: no parallelism (its -1 means every core)
except ImportError:
    pass

pyvips.cache_set_max(0)
pyvips.voperation_cache_set_max(0) if hasattr(pyvips, "voperation_cache_set_max") else None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IMAGES = os.path.join(HERE, ".images")
IMAGO = os.path.join(ROOT, "Tools", ".build", "release", "imago")
RAW = os.path.join(HERE, ".build-raw", "raw_codecs")
ITERATIONS = int(os.environ.get("ITERATIONS", "15"))
P3_PROFILE = os.path.join(ROOT, "Tests", "ImagoCodecsTests", "Resources", "color", "display-p3.icc")


def photo(width, height, seed):
    """A photo-like picture: smooth colour fields, edges and fine grain."""
    rng = np.random.default_rng(seed)
    small = rng.random((height // 50 + 2, width // 50 + 2, 3))
    field = np.asarray(Image.fromarray((small * 255).astype(np.uint8)).resize((width, height), Image.BICUBIC), dtype=np.float32)
    y, x = np.mgrid[0:height, 0:width]
    waves = 40 * np.sin(x / 37.0)[..., None] * np.cos(y / 53.0)[..., None]
    grain = rng.normal(0, 6, (height, width, 3))
    pixels = np.clip(field + waves + grain, 0, 255).astype(np.uint8)
    image = Image.fromarray(pixels)
    # A few hard-edged shapes, as in real scenes.
    for i in range(12):
        box = Image.new("RGB", (width // 8, height // 10), tuple(int(v) for v in rng.integers(0, 255, 3)))
        image.paste(box, (int(rng.integers(0, width - width // 8)), int(rng.integers(0, height - height // 10))))
    return image


def make_images():
    os.makedirs(IMAGES, exist_ok=True)
    specs = {
        "photo-12mp.jpg": lambda: photo(4000, 3000, 1).save(path("photo-12mp.jpg"), quality=90),
        "photo-12mp.png": lambda: photo(4000, 3000, 1).save(path("photo-12mp.png")),
        "photo-12mp.webp": lambda: photo(4000, 3000, 1).save(path("photo-12mp.webp"), quality=80),
        "photo-1mp.jpg": lambda: photo(1152, 864, 2).save(path("photo-1mp.jpg"), quality=90),
        "photo-1mp.png": lambda: photo(1200, 900, 3).save(path("photo-1mp.png")),
        "photo-1mp-lossy.webp": lambda: photo(1200, 900, 4).save(path("photo-1mp-lossy.webp"), quality=80),
        "graphic-1mp-lossless.webp": lambda: graphic(1200, 900).save(path("graphic-1mp-lossless.webp"), lossless=True),
        "photo-1mp-lossless.webp": lambda: photo(1200, 900, 6).save(path("photo-1mp-lossless.webp"), lossless=True),
        "animation-24f.gif": make_gif,
        "animation-24f.png": make_apng,
        "photo-1mp.avif": lambda: photo(1152, 864, 7).save(path("photo-1mp.avif"), quality=65),
        "photo-12mp.avif": lambda: photo(4000, 3000, 1).save(path("photo-12mp.avif"), quality=65),
        "photo-1mp.heic": lambda: photo(1152, 864, 8).save(path("photo-1mp.heic"), quality=65),
        "photo-12mp.heic": lambda: photo(4000, 3000, 1).save(path("photo-12mp.heic"), quality=65),
        "photo-1mp.jxl": lambda: cjxl(photo(1152, 864, 9), "photo-1mp.jxl"),
        "photo-12mp.jxl": lambda: cjxl(photo(4000, 3000, 1), "photo-12mp.jxl"),
        # The 12 MP photo tagged Display P3 (the profile of Imago's colour tests): decoding converts it to sRGB.
        "photo-12mp-p3.jpg": lambda: photo(4000, 3000, 1).save(path("photo-12mp-p3.jpg"), quality=90, icc_profile=open(P3_PROFILE, "rb").read()),
    }
    for name, make in specs.items():
        if not os.path.exists(path(name)):
            make()
    return list(specs)


def graphic(width, height):
    """Flat colours and text-like strokes: what lossless WebP is used for."""
    image = Image.new("RGB", (width, height), (245, 245, 240))
    rng = np.random.default_rng(5)
    for i in range(200):
        colour = tuple(int(v) for v in rng.integers(0, 255, 3))
        x, y = int(rng.integers(0, width - 100)), int(rng.integers(0, height - 40))
        image.paste(Image.new("RGB", (int(rng.integers(10, 100)), int(rng.integers(4, 40))), colour), (x, y))
    return image


def make_gif():
    frames = []
    for i in range(24):
        frame = photo(480, 360, 100 + i).quantize(colors=128, dither=Image.Dither.NONE)
        frames.append(frame)
    frames[0].save(path("animation-24f.gif"), save_all=True, append_images=frames[1:], duration=80, loop=0)


def make_apng():
    """The GIF's 24 frames as an APNG (Pillow stores each frame's changed rectangle)."""
    gif = Image.open(path("animation-24f.gif"))
    frames = []
    for index in range(gif.n_frames):
        gif.seek(index)
        frames.append(gif.convert("RGBA"))
    frames[0].save(path("animation-24f.png"), save_all=True, append_images=frames[1:], duration=80, loop=0)


def cjxl(image, name):
    """A JPEG XL at distance 1 (libjxl's cjxl; Pillow and the pyvips wheel write none)."""
    source = path(name + ".source.png")
    image.save(source)
    subprocess.run(["cjxl", source, path(name), "-d", "1", "--num_threads=0"], check=True, capture_output=True)
    os.remove(source)


def path(name):
    return os.path.join(IMAGES, name)


def timed(work, iterations=ITERATIONS):
    work()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def imago(benchmark, name, *extra):
    out = subprocess.run([IMAGO, "bench", *benchmark.split(), "--json", "--iterations", str(ITERATIONS), *extra, path(name)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])["median_ms"]


def raw(codec, name):
    out = subprocess.run([RAW, codec, path(name), str(ITERATIONS)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["median_ms"]


def raw_encode(codec, name, quality):
    """Debian's libjpeg-turbo or libwebp encoding as Imago calls them (Benchmarks/raw/encode_codecs.c)."""
    out = subprocess.run([os.path.join(HERE, ".build-raw", "encode_codecs"), codec, path(name), quality, str(ITERATIONS)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["median_ms"]


def raw_reused(codec, name):
    """The C library decoding into one buffer it reuses: no allocation, no page faults (the limit)."""
    if codec in NEXT_CODECS:
        out = subprocess.run([NEXT, NEXT_CODECS[codec], path(name), str(ITERATIONS), "1"], check=True, capture_output=True, text=True).stdout
        return json.loads(out.splitlines()[-1])["median_ms"]
    return raw(codec + "-reuse", name) if codec in ("jpeg", "png", "webp") else None


# The formats Benchmarks/raw/next_codecs.c decodes, by the mode Imago's library matches.
NEXT = os.path.join(HERE, ".build-raw", "next_codecs")
NEXT_CODECS = {"avif": "avif-dav1d", "heic": "heif-libde265", "jxl": "jxl"}


def pillow_decode(data):
    def work():
        image = Image.open(io.BytesIO(data))
        for index in range(getattr(image, "n_frames", 1)):
            image.seek(index)
            image.load()
    return work


def vips_decode(data, animated):
    def work():
        options = {"n": -1} if animated else {}
        image = pyvips.Image.new_from_buffer(data, "", access="sequential", **options)
        image.write_to_memory()
    return work


def pillow_decode_to_srgb(data):
    """Decode, then the embedded profile to sRGB with ImageCms (the transform built once, outside the timing)."""
    from PIL import ImageCms
    embedded = ImageCms.ImageCmsProfile(io.BytesIO(Image.open(io.BytesIO(data)).info["icc_profile"]))
    transform = ImageCms.buildTransform(embedded, ImageCms.createProfile("sRGB"), "RGB", "RGB", ImageCms.Intent.PERCEPTUAL)

    def work():
        ImageCms.applyTransform(Image.open(io.BytesIO(data)), transform)
    return work


def vips_decode_to_srgb(data):
    """Decode, then the embedded profile to sRGB (libvips' icc_transform, lcms2 underneath)."""
    return lambda: pyvips.Image.new_from_buffer(data, "", access="sequential").icc_transform("srgb").write_to_memory()


def timed_or_none(work):
    """`timed(work)`, or None when the peer cannot read the format (the pyvips wheel has no HEVC or JPEG XL)."""
    try:
        return timed(work)
    except Exception:
        return None


def pillow_thumbnail(data):
    def work():
        image = Image.open(io.BytesIO(data))
        image.draft("RGB", (256, 256))
        image.thumbnail((256, 256))
    return work


def vips_thumbnail(data):
    return lambda: pyvips.Image.thumbnail_buffer(data, 256).write_to_memory()


def pillow_encode(image, fmt, **options):
    return lambda: image.save(io.BytesIO(), fmt, **options)


def vips_encode(image, suffix):
    return lambda: image.write_to_buffer(suffix)


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "n/a"


def peer_libraries():
    """The codec libraries the peers' wheels bundle, as they report them."""
    from PIL import features
    found = {"Pillow libjpeg-turbo": features.version("jpg"), "Pillow zlib": features.version("zlib"),
             "Pillow libwebp": features.version("webp"), "Pillow libavif": features.version("avif")}
    try:
        info = pillow_heif.libheif_info()
        found["pillow-heif libheif"] = info.get("libheif")
        found["pillow-heif decoders"] = ", ".join(f"{k} {v}" for k, v in sorted(info.get("decoders", {}).items()))
    except Exception:
        pass
    return {k: v for k, v in found.items() if v}


def system_libraries():
    """The versions of the system libraries Imago and the raw C figures link."""
    versions = {}
    for package in ["libheif", "libde265", "libavif", "libjxl", "libturbojpeg", "libwebp", "libgif", "libspng", "libdeflate", "lcms2"]:
        try:
            versions[package] = subprocess.run(["pkg-config", "--modversion", package], check=True, capture_output=True, text=True).stdout.strip()
        except Exception:
            pass
    return versions


def behind_notes(behind, rows):
    lines = []
    decodes = {row["image"]: row for row in rows if row["task"] == "decode"}
    for row, best in behind:
        decode = decodes.get(row["image"])
        if row["task"].startswith("thumbnail") and decode and decode["reused"] and decode["imago"] <= decode["reused"] * 1.05 \
                and os.path.splitext(row["image"])[1] in (".avif", ".heic", ".jxl"):
            # No scaled decoding in these libraries: a thumbnail is the full decode, then a resize.
            peer = "Pillow" if row["pillow"] == best else "pyvips"
            peer_decode = decode["pillow"] if peer == "Pillow" else decode["pyvips"]
            line = (f"- **{row['task']}, {row['image']}**: {row['imago'] / best:.2f}x {peer}'s {best:.2f} ms. The library cannot "
                    f"decode scaled, so a thumbnail is its full decode and a resize. Imago's decode of the same file is at the "
                    f"library's speed (decode row: {decode['imago']:.2f} ms, raw {decode['reused']:.2f} ms, "
                    f"{decode['imago'] / decode['reused']:.2f}x); the resize after it costs Imago {row['imago'] - decode['imago']:.2f} ms")
            if peer_decode:
                line += f" and {peer} {best - peer_decode:.2f} ms (its thumbnail minus its decode)."
            else:
                line += "."
            lines.append(line)
            continue
        peer = "Pillow" if row["pillow"] == best else "pyvips"
        line = f"- **{row['task']}, {row['image']}**: {row['imago'] / best:.2f}x {peer}'s {best:.2f} ms."
        raw_best = min(v for v in (row["raw"], row["reused"]) if v) if row["raw"] or row["reused"] else None
        if raw_best and row["imago"] <= raw_best * 1.05:
            line += (f" The system library called from C on the same file takes {raw_best:.2f} ms (Imago / raw "
                     f"{row['imago'] / raw_best:.2f}), so Imago adds nothing that matters: the difference to {peer} "
                     f"is the library {peer} uses (its own build or version; below), not Imago's code.")
        elif raw_best:
            line += (f" **Not explained by the library**: the system library called from C on the same file takes "
                     f"{raw_best:.2f} ms, and Imago {row['imago'] / raw_best:.2f}x that.")
        else:
            line += " **Not explained**: no raw figure for this row."
        lines.append(line)
    if lines:
        lines.append("")
        lines.append("System libraries (pkg-config): " + ", ".join(f"{k} {v}" for k, v in system_libraries().items()) + ".")
        lines.append("Peers' bundled libraries: " + ", ".join(f"{k} {v}" for k, v in peer_libraries().items()) + ".")
    return "\n".join(lines)


def main():
    names = make_images()
    rows = []
    raw_codec = {".jpg": "jpeg", ".png": "png", ".webp": "webp", ".gif": "gif-rgba", ".avif": "avif", ".heic": "heic", ".jxl": "jxl"}
    for name in names:
        data = open(path(name), "rb").read()
        animated = name.startswith("animation")
        codec = raw_codec[os.path.splitext(name)[1]]
        next_format = codec in NEXT_CODECS
        if name == "photo-12mp-p3.jpg":
            rows.append({"task": "decode to sRGB", "image": name, "imago": imago("decode", name),
                         "raw": raw("jpeg-icc", name), "reused": raw("jpeg-icc-reuse", name),
                         "pillow": timed(pillow_decode_to_srgb(data)), "pyvips": timed(vips_decode_to_srgb(data))})
            continue
        row = {"task": "decode", "image": name,
               "imago": imago("decode", name),
               "raw": None if next_format or name == "animation-24f.png" else raw(codec, name),
               "reused": None if name == "animation-24f.png" else raw_reused(codec, name),
               "pillow": timed_or_none(pillow_decode(data)), "pyvips": timed_or_none(vips_decode(data, animated))}
        rows.append(row)
    for name in ["photo-12mp.jpg", "photo-1mp.jpg", "photo-12mp.png", "photo-1mp.png", "photo-1mp-lossy.webp", "photo-1mp-lossless.webp",
                 "photo-12mp.avif", "photo-1mp.heic", "photo-1mp.jxl"]:
        data = open(path(name), "rb").read()
        rows.append({"task": "thumbnail 256", "image": name,
                     "imago": imago("thumbnail", name, "--max-size", "256"),
                     "raw": raw("jpeg-thumb", name) if name.endswith(".jpg") else None,
                     # AVIF, HEIC and JPEG XL cannot decode scaled: their floor is the library's full decode.
                     "reused": raw_reused(raw_codec[os.path.splitext(name)[1]], name)
                     if os.path.splitext(name)[1] in (".avif", ".heic", ".jxl") else None,
                     "pillow": timed_or_none(pillow_thumbnail(data)), "pyvips": timed_or_none(vips_thumbnail(data))})
    source = "photo-1mp.jpg"
    pil_image = Image.open(path(source)).convert("RGB")
    vips_image = pyvips.Image.new_from_file(path(source)).copy_memory()
    pil_image.save(path("photo-1mp.ppm"))   # the raw encoders' input
    for fmt, imago_args, pil, vips in [
        ("jpeg", ["--format", "jpeg", "--quality", "85"], pillow_encode(pil_image, "JPEG", quality=85), vips_encode(vips_image, ".jpg[Q=85]")),
        ("png", ["--format", "png"], pillow_encode(pil_image, "PNG"), vips_encode(vips_image, ".png")),
        ("webp", ["--format", "webp", "--quality", "80"], pillow_encode(pil_image, "WEBP", quality=80), vips_encode(vips_image, ".webp[Q=80]")),
        # libaom at speed 6 everywhere: Imago's default, Pillow's default, pyvips effort 3 (= speed 6). Equal SSIM,
        # not equal numbers: Imago's quality 62 reaches the SSIM of Pillow's 60 (0.935 against 0.927) in a
        # smaller file (Benchmarks/avif-encoders.md); at 60 it is 0.925.
        ("avif", ["--format", "avif", "--quality", "62"], pillow_encode(pil_image, "AVIF", quality=60, speed=6, max_threads=1),
         vips_encode(vips_image, ".avif[Q=60,effort=3]")),
    ]:
        raw_quality = {"jpeg": "85", "webp": "80"}.get(fmt)
        rows.append({"task": f"encode {fmt}", "image": source, "imago": imago("encode", source, *imago_args),
                     "raw": raw_encode(fmt, "photo-1mp.ppm", raw_quality) if raw_quality else None, "reused": None,
                     "pillow": timed(pil), "pyvips": timed(vips)})

    header = ("| task | image | Imago ms | raw C ms | raw C reused ms | Pillow ms | pyvips ms "
              "| Imago / raw | Imago / reused | Imago / Pillow | Imago / pyvips | Imago / best peer |")
    lines = [header, "|" + "---|" * 12]
    behind = []
    for row in rows:
        fmt = lambda v: f"{v:.2f}" if v else "n/a"
        peers = [v for v in (row["pillow"], row["pyvips"]) if v]
        best = min(peers) if peers else None
        lines.append(f"| {row['task']} | {row['image']} | {fmt(row['imago'])} | {fmt(row['raw'])} | {fmt(row['reused'])} | "
                     f"{fmt(row['pillow'])} | {fmt(row['pyvips'])} | {ratio(row['imago'], row['raw'])} | "
                     f"{ratio(row['imago'], row['reused'])} | {ratio(row['imago'], row['pillow'])} | "
                     f"{ratio(row['imago'], row['pyvips'])} | {ratio(row['imago'], best)} |")
        if best and row["imago"] > best * 1.005:
            behind.append((row, best))
    table = "\n".join(lines)
    notes = behind_notes(behind, rows)
    print(table)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, " \
              f"Pillow {Image.__version__}, pyvips {pyvips.__version__} (libvips {pyvips.version(0)}.{pyvips.version(1)})"
    with open(os.path.join(HERE, "codecs.md"), "w") as f:
        f.write("# Codec benchmarks\n\n")
        f.write("Written by `Benchmarks/compare-codecs` on " + time.strftime("%Y-%m-%d") + f" ({machine}).\n")
        f.write(f"Median of {ITERATIONS} runs after a warm-up, one thread everywhere (VIPS_CONCURRENCY=1).\n")
        f.write("Ratios below 1.00 mean Imago is faster. Raw C is the library called directly from C with the same\n")
        f.write("output format (`Benchmarks/raw/raw_codecs.c`); for GIF, giflib's `DGifSlurp` plus the same compositing\n")
        f.write("of every frame to an RGBA canvas in C (giflib itself stops at colour indices).\n")
        f.write("Raw C reused decodes into one buffer allocated before timing, so it pays no allocation and no\n")
        f.write("page faults: the limit. The plain raw C column allocates and frees a buffer per run, as a caller must.\n")
        f.write("The raw JPEG thumbnail figure is the DCT-scaled decode alone, without the final resize; for AVIF, HEIC\n")
        f.write("and JPEG XL thumbnails, which their libraries cannot decode scaled, raw C reused is the full decode.\n")
        f.write("For AVIF, HEIC and JPEG XL the raw figures come from `Benchmarks/raw/next_codecs.c` (libavif with dav1d,\n")
        f.write("libheif with libde265, libjxl; one thread, a reused buffer). Pillow reads HEIC with pillow-heif and\n")
        f.write("JPEG XL with pillow-jxl-plugin; the pyvips wheel reads neither (n/a). The APNG is the GIF's frames.\n")
        f.write("\"decode to sRGB\" is the 12 MP JPEG tagged Display P3, converted while decoding: raw C is libjpeg-turbo\n")
        f.write("then lcms2's transform (built once, outside the timing; `raw_codecs jpeg-icc`), Pillow is `ImageCms.applyTransform`\n")
        f.write("with a transform built once, pyvips is `icc_transform(\"srgb\")`. The best peer is the faster of Pillow and pyvips.\n")
        f.write("The raw encode figures are Debian's libjpeg-turbo and libwebp called as Imago calls them\n")
        f.write("(`Benchmarks/raw/encode_codecs.c`); Pillow's wheel bundles newer ones (libjpeg-turbo 3, libwebp 1.6)\n")
        f.write("with the same settings (the WebP files are byte for byte the same), so a gap to Pillow with Imago at\n")
        f.write("the raw figure is the library's version, not Imago's overhead. AVIF is compared at equal SSIM, not\n")
        f.write("equal quality numbers: Imago at 62 against Pillow and pyvips at 60 (`Benchmarks/avif-encoders.md`).\n\n")
        f.write(table + "\n")
        f.write("\n## Rows behind the best peer\n\n")
        f.write("Written by the same run: each row whose Imago time is over the best peer's by more than 0.5%, with the raw\n")
        f.write("library on the same file (where the table has it) and the libraries the peer bundles.\n\n")
        f.write((notes or "None.") + "\n")


if __name__ == "__main__":
    main()
