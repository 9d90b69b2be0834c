"""PNG encoding: Imago at every compression against Pillow, pyvips and raw
libspng, on photos, a screenshot, palette graphics and an alpha image; time
and bytes. Writes Benchmarks/png.md. Run by Benchmarks/compare-png."""
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyvips
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_codecs as codecs  # noqa: E402  (the photo and graphic generators)

HERE = os.path.dirname(os.path.abspath(__file__))
IMAGES = os.path.join(HERE, ".images", "png")
IMAGO = os.path.join(HERE, "..", "Tools", ".build", "release", "imago")
RAW = os.path.join(HERE, ".build-raw", "png_encode")
ITERATIONS = int(os.environ.get("ITERATIONS", "9"))


def screenshot():
    """A desktop window: a title bar, a sidebar of buttons, lines of text."""
    image = Image.new("RGB", (1440, 900), (250, 250, 252))
    draw = ImageDraw.Draw(image)
    rng = np.random.default_rng(9)
    draw.rectangle((0, 0, 1440, 40), fill=(40, 44, 52))
    draw.rectangle((0, 40, 240, 900), fill=(230, 232, 236))
    font = ImageFont.load_default()
    words = "the quick brown fox jumps over lazy dog image loader server swift".split()
    for y in range(60, 880, 18):
        x = 260
        while x < 1400:
            word = words[int(rng.integers(0, len(words)))]
            draw.text((x, y), word, fill=(30, 30, 30), font=font)
            x += 8 * len(word) + 8
    for i in range(12):
        fill = (66, 133, 244) if i % 3 == 0 else (255, 255, 255)
        draw.rounded_rectangle((20, 60 + i * 40, 220, 90 + i * 40), 6, fill=fill, outline=(200, 200, 200))
    return image


def alpha_photo():
    """A photo cut out by a soft-edged disc: RGBA with every alpha level."""
    image = codecs.photo(800, 800, 11).convert("RGBA")
    mask = Image.new("L", (800, 800), 0)
    ImageDraw.Draw(mask).ellipse((40, 40, 760, 760), fill=255)
    image.putalpha(mask.filter(ImageFilter.GaussianBlur(20)))
    return image


def make_images():
    """Each source as the RGB or RGBA pixels an encoder is handed (a palette
    graphic as the RGB a decoder gives), stored losslessly."""
    os.makedirs(IMAGES, exist_ok=True)
    photo = Image.open(io.BytesIO(jpeg(codecs.photo(1152, 864, 2)))).convert("RGB")
    specs = {
        "photo-1mp": photo,
        "photo-12mp": Image.open(io.BytesIO(jpeg(codecs.photo(4000, 3000, 1)))).convert("RGB"),
        "screenshot": screenshot(),
        "graphic": codecs.graphic(1200, 900),
        "palette-64": codecs.graphic(1000, 750).quantize(colors=64).convert("RGB"),
        "alpha-photo": alpha_photo(),
    }
    for name, image in specs.items():
        target = os.path.join(IMAGES, name + ".png")
        if not os.path.exists(target):
            image.save(target, compress_level=1)
    return list(specs)


def jpeg(image):
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return out.getvalue()


def timed(work):
    return codecs.timed(work, ITERATIONS)


def imago(name, compression):
    source = os.path.join(IMAGES, name + ".png")
    out = subprocess.run([IMAGO, "bench", "encode", "--format", "png", "--png-compression", compression, "--json",
                          "--iterations", str(ITERATIONS), source], check=True, capture_output=True, text=True).stdout
    ms = json.loads(out.splitlines()[-1])["median_ms"]
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([IMAGO, "fetch", "--format", "png", "--png-compression", compression, "--no-cache", "--output", folder, source],
                       check=True, capture_output=True)
        written = [os.path.join(folder, f) for f in os.listdir(folder)]
        return ms, os.path.getsize(written[0])


def pillow(image, **options):
    def encode():
        out = io.BytesIO()
        image.save(out, "PNG", **options)
        return out
    return timed(encode), len(encode().getvalue())


def vips(image, **options):
    return timed(lambda: image.write_to_buffer(".png", **options)), len(image.write_to_buffer(".png", **options))


def raw(name, level):
    out = subprocess.run([RAW, os.path.join(IMAGES, name + ".png"), str(level), str(ITERATIONS)], check=True,
                         capture_output=True, text=True).stdout
    result = json.loads(out)
    return result["median_ms"], result["bytes"]


def main():
    names = make_images()
    columns = [
        ("Imago fast", lambda n, p, v: imago(n, "fast")),
        ("Imago default", lambda n, p, v: imago(n, "default")),
        ("Imago best", lambda n, p, v: imago(n, "best")),
        ("Pillow level 1", lambda n, p, v: pillow(p, compress_level=1)),
        ("Pillow default (6)", lambda n, p, v: pillow(p)),
        ("Pillow level 9", lambda n, p, v: pillow(p, compress_level=9)),
        ("pyvips level 1", lambda n, p, v: vips(v, compression=1)),
        ("pyvips default", lambda n, p, v: vips(v)),
        ("pyvips level 9", lambda n, p, v: vips(v, compression=9)),
        ("libspng level 1", lambda n, p, v: raw(n, 1)),
        ("libspng level 6", lambda n, p, v: raw(n, 6)),
        ("libspng level 9", lambda n, p, v: raw(n, 9)),
    ]
    lines = ["| image | encoder | ms | bytes | time / Imago default | bytes / Imago default |", "|---|---|---|---|---|---|"]
    verdicts = []
    for name in names:
        source = os.path.join(IMAGES, name + ".png")
        pil_image = Image.open(source)
        pil_image.load()
        vips_image = pyvips.Image.new_from_file(source).copy_memory()
        results = [(label, measure(name, pil_image, vips_image)) for label, measure in columns]
        base_ms, base_bytes = dict(results)["Imago default"]
        for label, (ms, size) in results:
            lines.append(f"| {name} | {label} | {ms:.1f} | {size:,} | {ms / base_ms:.2f} | {size / base_bytes:.3f} |")
            print(lines[-1], flush=True)
        values = dict(results)
        verdicts.append((name, values["Imago default"], values["pyvips default"], values["Pillow default (6)"]))
    summary = ["| image | Imago default ms | pyvips default ms | speed bar (≤ pyvips) | Imago default bytes | Pillow default bytes | size bar (≤ Pillow) |",
               "|---|---|---|---|---|---|---|"]
    for name, ours, vips_default, pil_default in verdicts:
        summary.append(f"| {name} | {ours[0]:.1f} | {vips_default[0]:.1f} | {'met' if ours[0] <= vips_default[0] else 'not met'} "
                       f"| {ours[1]:,} | {pil_default[1]:,} | {'met' if ours[1] <= pil_default[1] else 'not met'} |")
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, Pillow {Image.__version__}, " \
              f"pyvips {pyvips.__version__} (libvips {pyvips.version(0)}.{pyvips.version(1)})"
    with open(os.path.join(HERE, "png.md"), "w") as f:
        f.write("# PNG encoding\n\n")
        f.write(f"Written by `Benchmarks/compare-png` on {time.strftime('%Y-%m-%d')} ({machine}).\n")
        f.write(f"Median of {ITERATIONS} runs after a warm-up, one thread everywhere (VIPS_CONCURRENCY=1). Every encoder gets the same\n")
        f.write("RGB or RGBA pixels (the palette graphic as the RGB its decode gives). Imago: `imago bench encode --format png\n")
        f.write("--png-compression X` for time, `imago fetch` for bytes. libspng: `Benchmarks/raw/png_encode.c`, its own encoder\n")
        f.write("called from C at a zlib level with its default filter choice. pyvips' default writes no filters (zlib-ng level 6);\n")
        f.write("Pillow's and libspng's choose a filter per row, as Imago does, and compress with zlib's Z_FILTERED.\n")
        f.write("Imago writes an RGB or RGBA image of at most 256 colours indexed (screenshot, graphic, palette-64 here),\n")
        f.write("the same pixels in a third of the bytes; its default compresses with zlib's run-length deflate (Z_RLE) or\n")
        f.write("libdeflate 6 when that makes a sixteenth of the rows over 2% smaller (run-length on the photos here).\n")
        f.write("The machine is shared by several builds: times are noisy, compare the encoders of one run.\n\n")
        f.write("## The bars: Imago's default against pyvips' default time and Pillow's default size\n\n")
        f.write("\n".join(summary) + "\n\n## Every encoder and level\n\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
