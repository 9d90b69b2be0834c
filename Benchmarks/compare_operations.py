#!/usr/bin/env python3
"""Imago's processing operations against pyvips and Pillow: time and output.

Every operation runs on images decoded once (PNG inputs, so all three read the
same pixels), and only the operation is timed: the median of ITERATIONS runs
after one warm-up. Imago through `imago bench operation --json` (one thread);
pyvips in-process, the result materialised with `write_to_memory()`, libvips'
operation cache off, once with VIPS_CONCURRENCY=1 and once with its default
(one thread per core); Pillow in-process where it has the operation. Imago's
result (`--output`, PNG) is compared with pyvips' pixel by pixel (max channel
difference, PSNR, share of values more than 1 level apart); crops are placed
in their source to report the rectangle each library chose.

    python compare_operations.py FIXTURES        (run by Benchmarks/compare-operations)
    python compare_operations.py --vips-worker   (internal: times pyvips, jobs on stdin)
"""
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IMAGO = os.path.join(ROOT, "Tools", ".build", "release", "imago")
IMAGES = os.path.join(HERE, ".images", "operations")
ITERATIONS = int(os.environ.get("ITERATIONS", "9"))
WHITE = [255, 255, 255]
SIGMA = 1.0
TRIM_THRESHOLD = 10


def timed(work):
    work()
    times = []
    for _ in range(ITERATIONS):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times)


# ---- pyvips (also run as a worker, so that VIPS_CONCURRENCY applies at start-up) ----

def vips_variants(job, image, overlay):
    """The pyvips operations for a job, by name: each returns an image to materialise."""
    import pyvips
    op, w, h = job["op"], image.width, image.height
    if op == "extend":
        W, H = job["canvas"]
        return {"embed": lambda: image.embed((W - w) // 2, (H - h) // 2, W, H, extend="background", background=WHITE)}
    if op == "composite":
        x, y = job["at"]
        return {"composite2 over": lambda: image.composite2(overlay, "over", x=x, y=y)}
    if op == "flatten":
        return {"flatten": lambda: image.flatten(background=WHITE)}
    if op == "sharpen":
        s = job["sigma"]
        usm = lambda sigma: (image + (image - image.gaussblur(sigma)) * 1.0).rint().cast("uchar")
        return {"sharpen (LAB, L only)": lambda: image.sharpen(sigma=s),
                f"unsharp mask, gaussblur({s:g})": lambda: usm(s),
                f"unsharp mask, gaussblur({job['box_sigma']:.3g})": lambda: usm(job["box_sigma"])}
    if op == "trim":
        def trim():
            left, top, width, height = image.find_trim(threshold=TRIM_THRESHOLD, background=image(0, 0))
            return image.crop(left, top, width, height) if width > 0 and height > 0 else image
        return {"find_trim + crop": trim}
    if op.startswith("smartcrop"):
        W, H = job["crop"]
        return {f"smartcrop {job['interesting']}": lambda: image.smartcrop(W, H, interesting=job["interesting"])}
    raise ValueError(op)


def vips_load(path):
    import pyvips
    return pyvips.Image.new_from_file(path, access="random").copy_memory()


def vips_worker():
    import pyvips
    pyvips.cache_set_max(0)  # else a repeated call is answered from libvips' operation cache
    results = []
    for job in json.load(sys.stdin):
        image = vips_load(job["path"])
        overlay = vips_load(job["overlay"]) if job.get("overlay") else None
        results.append({name: timed(lambda: work().write_to_memory())
                        for name, work in vips_variants(job, image, overlay).items()})
    json.dump({"threads": pyvips.concurrency_get(), "results": results}, sys.stdout)


def vips_times(jobs, threads):
    env = dict(os.environ)
    env.pop("VIPS_CONCURRENCY", None)
    if threads:
        env["VIPS_CONCURRENCY"] = str(threads)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--vips-worker"], input=json.dumps(jobs),
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


# ---- Pillow ----

def pillow_work(job, image, overlay):
    from PIL import Image, ImageChops, ImageFilter
    op = job["op"]
    if op == "extend":
        def extend():
            canvas = Image.new(image.mode, tuple(job["canvas"]), tuple(WHITE))
            canvas.paste(image, ((job["canvas"][0] - image.width) // 2, (job["canvas"][1] - image.height) // 2))
            return canvas
        return "new + paste", extend
    if op == "composite":
        def composite():
            base = image.copy()
            base.paste(overlay, tuple(job["at"]), overlay)
            return base
        return "paste with mask", composite
    if op == "flatten":
        def flatten():
            canvas = Image.new("RGB", image.size, tuple(WHITE))
            canvas.paste(image, (0, 0), image.getchannel("A"))
            return canvas
        return "new + paste with mask", flatten
    if op == "sharpen":
        return f"UnsharpMask({job['sigma']:g}, 100, 0)", lambda: image.filter(ImageFilter.UnsharpMask(job["sigma"], 100, 0))
    if op == "trim":
        def trim():
            difference = ImageChops.difference(image, Image.new(image.mode, image.size, image.getpixel((0, 0))))
            box = difference.point(lambda v: 255 if v > TRIM_THRESHOLD else 0).getbbox()
            return image.crop(box) if box else image
        return "difference + getbbox (no median)", trim
    return None, None


# ---- inputs ----

def pictures(fixtures):
    """(name, path, kind) for every input: PNG, decoded once from the sources."""
    from PIL import Image
    sys.path.insert(0, HERE)
    from compare_codecs import photo as codecs_photo
    from make_server_images import photo as server_photo, watermark
    os.makedirs(IMAGES, exist_ok=True)

    def made(name, make):
        target = os.path.join(IMAGES, name)
        if not os.path.exists(target):
            make().save(target, compress_level=1)
        return target

    def fixture(name):
        return Image.open(os.path.join(fixtures, name))

    def jpeg_round_trip(image, quality):
        with tempfile.NamedTemporaryFile(suffix=".jpg") as file:
            image.save(file.name, quality=quality)
            return Image.open(file.name).convert("RGB")

    portraits = {"Henner": "800px-Christophe_Henner_-_June_2016.jpg", "Guido": "800px-Guido-portrait-2014.jpg",
                 "Maher": "800px-Katherine_Maher.jpg", "Giunchedi": "Giunchedi%2C_Filippo_January_2015_01.jpg"}
    photos = [(f"{label} (photo)", made(f"real-{label}.png", lambda n=name: fixture(n).convert("RGB")))
              for label, name in portraits.items()]
    server = lambda: jpeg_round_trip(server_photo(random.Random(99), 4000, 3000), 88)
    photos.append(("server-12mp (JPEG q88)", made("server-12mp.png", server)))
    photos.append(("photo-like-12mp", made("photo-like-12mp-11.png", lambda: codecs_photo(4000, 3000, 11))))

    def bordered():
        inner = server_photo(random.Random(98), 3600, 2560)
        canvas = Image.new("RGB", (4000, 3000), (255, 255, 255))
        canvas.paste(inner, (150, 260))
        return jpeg_round_trip(canvas, 88)
    trims = [("fill.jpg (blue bars)", made("fill.png", lambda: fixture("fill.jpg").convert("RGB"))),
             ("white-border-12mp (JPEG q88)", made("white-border-12mp.png", bordered))] + photos[:2]
    alphas = [("dice RGBA", made("dice.png", lambda: fixture("PNG_transparency_demonstration_1.png").convert("RGBA"))),
              ("watermarkBig RGBA", made("watermark-big.png", lambda: fixture("watermarkBig.png").convert("RGBA"))),
              ("dice RGBA 12mp", made("dice-12mp.png", lambda: fixture("PNG_transparency_demonstration_1.png")
                                      .convert("RGBA").resize((4000, 3000), Image.Resampling.LANCZOS)))]
    small_mark = made("watermark-160x48.png", watermark)
    big_mark = alphas[1][1]
    return photos, trims, alphas, small_mark, big_mark


def jobs_for(photos, trims, alphas, small_mark, big_mark):
    from PIL import Image
    size = lambda path: Image.open(path).size
    jobs = []
    for name, path in photos:
        w, h = size(path)
        jobs.append({"op": "extend", "name": name, "path": path, "canvas": [max(w, h)] * 2, "args": []})
        jobs.append({"op": "composite", "name": name + " + 160x48 mark SE", "path": path, "overlay": small_mark,
                     "at": [w - 160 - 16, h - 48 - 16], "args": ["--overlay", small_mark, "--offset-x", "16", "--offset-y", "16"]})
        jobs.append({"op": "composite", "name": name + " + 900x600 overlay, centre", "path": path, "overlay": big_mark,
                     "at": [(w - 900) // 2, (h - 600) // 2], "args": ["--overlay", big_mark, "--gravity", "center"]})
        radius = max(1, math.floor(math.sqrt(SIGMA * SIGMA + 0.25)))  # Image.boxRadius(sigma:), rounded half up
        jobs.append({"op": "sharpen", "name": name, "path": path, "sigma": SIGMA, "box_sigma": math.sqrt(radius * (radius + 1)),
                     "args": ["--sigma", str(SIGMA)]})
        for interesting in ("attention", "entropy"):
            jobs.append({"op": "smartcrop-" + interesting, "name": name, "path": path, "crop": [min(w, h)] * 2,
                         "interesting": interesting, "args": []})
    for name, path in trims:
        jobs.append({"op": "trim", "name": name, "path": path, "args": ["--threshold", str(TRIM_THRESHOLD)]})
    for name, path in alphas:
        jobs.append({"op": "flatten", "name": name, "path": path, "args": ["--background", "ffffff"]})
    order = ["extend", "composite", "flatten", "sharpen", "trim", "smartcrop-attention", "smartcrop-entropy"]
    return sorted(jobs, key=lambda job: order.index(job["op"]))


# ---- comparison ----

def as_array(image):
    """An RGB or RGBA uint8 array from a PIL or pyvips image."""
    if isinstance(image, np.ndarray):
        return image
    if hasattr(image, "write_to_memory"):
        return np.ndarray(buffer=image.write_to_memory(), dtype=np.uint8, shape=[image.height, image.width, image.bands])
    return np.asarray(image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB"))


def difference(a, b):
    """(max channel difference, PSNR, % of values > 1 apart) over the colour channels; None when sizes differ."""
    if a.shape[:2] != b.shape[:2]:
        return None
    d = np.abs(a[..., :3].astype(np.int16) - b[..., :3].astype(np.int16))
    mse = float(np.mean(d.astype(np.float64) ** 2))
    return int(d.max()), (math.inf if mse == 0 else 10 * math.log10(255 ** 2 / mse)), float(np.mean(d > 1) * 100)


def place(crop, source):
    """The (x, y) of `crop` inside `source` (an exact sub-image), or None."""
    h, w = crop.shape[:2]
    H, W = source.shape[:2]
    if h > H or w > W:
        return None
    candidates = np.ones((H - h + 1, W - w + 1), dtype=bool)
    for cy, cx in ((0, 0), (0, w - 1), (h - 1, 0), (h - 1, w - 1), (h // 2, w // 2)):
        candidates &= (source[cy:cy + H - h + 1, cx:cx + W - w + 1] == crop[cy, cx]).all(axis=-1)
    for y, x in zip(*np.nonzero(candidates)):
        if np.array_equal(source[y:y + h, x:x + w], crop):
            return int(x), int(y)
    return None


def describe(diff):
    if diff is None:
        return "sizes differ"
    peak, psnr, share = diff
    return "identical" if peak == 0 else f"max {peak}, {psnr:.1f} dB, {share:.2f}% > 1"


def convolve(plane, kernel):
    """`plane` (H x W x C, float64) convolved with a normalised 1-D kernel along both axes, edges clamped."""
    half = len(kernel) // 2
    for axis in (0, 1):
        pad = [(0, 0)] * plane.ndim
        pad[axis] = (half, half)
        padded = np.pad(plane, pad, mode="edge")
        size = plane.shape[axis]
        plane = sum(w * np.take(padded, range(i, i + size), axis=axis) for i, w in enumerate(kernel))
    return plane


def sharpen_references(job, source):
    """Unsharp masks in float64, rounded once: the blur Imago approximates (box cubed) and true Gaussians."""
    radius = max(1, math.floor(math.sqrt(job["sigma"] ** 2 + 0.25)))  # Image.boxRadius(sigma:), rounded half up
    box = np.ones(2 * radius + 1)
    cubed = np.convolve(np.convolve(box, box), box)
    kernels = {f"float box³ r={radius} (Imago's blur, unrounded)": cubed / cubed.sum()}
    for sigma in (job["sigma"], job["box_sigma"]):
        xs = np.arange(-math.ceil(4 * sigma), math.ceil(4 * sigma) + 1)
        gauss = np.exp(-xs ** 2 / (2 * sigma ** 2))
        kernels[f"float Gaussian σ={sigma:.3g}"] = gauss / gauss.sum()
    original = source.astype(np.float64)
    return [(label, np.clip(np.rint(2 * original - convolve(original, kernel)), 0, 255).astype(np.uint8))
            for label, kernel in kernels.items()]


def compare(job, imago_path, peers):
    """One line per peer result: the difference from Imago's output; for crops, the rectangles first."""
    from PIL import Image
    imago = as_array(Image.open(imago_path))
    cropping = job["op"] == "trim" or job["op"].startswith("smartcrop")
    source = as_array(Image.open(job["path"]))
    if job["op"] == "sharpen":
        peers = peers + sharpen_references(job, source)
    notes = []
    for label, result in peers:
        other = as_array(result)
        name = label.split(" ")[0]
        if not cropping:
            notes.append(f"{label}: {describe(difference(imago, other))}")
            continue
        mine, theirs = place(imago, source), place(other, source)
        (w, h), (ow, oh) = (imago.shape[1], imago.shape[0]), (other.shape[1], other.shape[0])
        if mine == theirs and (w, h) == (ow, oh):
            notes.append(f"{label}: same rectangle, {w}x{h} at {mine}; {describe(difference(imago, other))}")
            continue
        line = f"{label}: Imago {w}x{h} at {mine}, {name} {ow}x{oh} at {theirs}"
        if mine and theirs:
            ix = max(0, min(mine[0] + w, theirs[0] + ow) - max(mine[0], theirs[0]))
            iy = max(0, min(mine[1] + h, theirs[1] + oh) - max(mine[1], theirs[1]))
            line += f" ({ix * iy / (w * h + ow * oh - ix * iy) * 100:.0f}% overlap)"
        notes.append(line + ("; a different choice, by design" if job["op"].startswith("smartcrop") else ""))
    return notes


def main():
    if sys.argv[1:] == ["--vips-worker"]:
        return vips_worker()
    import pyvips
    from PIL import Image
    pyvips.cache_set_max(0)
    photos, trims, alphas, small_mark, big_mark = pictures(sys.argv[1])
    jobs = jobs_for(photos, trims, alphas, small_mark, big_mark)
    print(f"{len(jobs)} jobs, {ITERATIONS} iterations", flush=True)
    load_before = os.getloadavg()[0]
    single, default = vips_times(jobs, 1), vips_times(jobs, None)
    rows = []
    with tempfile.TemporaryDirectory() as out_dir:
        for index, job in enumerate(jobs):
            out = os.path.join(out_dir, f"{index}.png")
            run = subprocess.run([IMAGO, "bench", "operation", "--json", "--iterations", str(ITERATIONS),
                                  "--operation", job["op"], *job["args"], "--output", out, job["path"]],
                                 check=True, capture_output=True, text=True).stdout
            imago = json.loads(run.splitlines()[-1])
            image = vips_load(job["path"])
            overlay = vips_load(job["overlay"]) if job.get("overlay") else None
            variants = vips_variants(job, image, overlay)
            peers = [(f"pyvips {name}", work()) for name, work in variants.items()]
            pil = Image.open(job["path"])
            pil.load()
            mark = Image.open(job["overlay"]).convert("RGBA") if job.get("overlay") else None
            pil_name, pil_work = pillow_work(job, pil, mark)
            pillow = timed(pil_work) if pil_work else None
            if pil_work:
                peers.append((f"Pillow {pil_name}", pil_work()))
            notes = compare(job, out, peers)
            for position, name in enumerate(variants):
                rows.append({"op": job["op"], "image": job["name"], "size": f"{imago['input_width']}x{imago['input_height']}",
                             "out": f"{imago['output_width']}x{imago['output_height']}", "vips": name,
                             "imago": imago["median_ms"], "imago_min": imago["min_ms"],
                             "vips1": single["results"][index][name][0], "vipsN": default["results"][index][name][0],
                             "pillow": pillow[0] if pillow and position == 0 else None, "pillow_name": pil_name,
                             "notes": notes if position == 0 else [], "diff": notes[position]})
                print(json.dumps(rows[-1]), flush=True)
    write_report(rows, default["threads"], (load_before, os.getloadavg()[1]))


MARK_START, MARK_END = "<!-- results: written by compare_operations.py -->", "<!-- end of results -->"


def write_report(rows, threads, load):
    """Replaces the results part of operations.md (between the markers), keeping the prose around it."""
    import pyvips
    from PIL import Image
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    machine = (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; Pillow {Image.__version__}, "
               f"pyvips {pyvips.__version__} (libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)})")
    ms = lambda v: "–" if v is None else f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"
    ratio = lambda r: f"{r['vips1'] / r['imago']:.2f}×" if r["vips1"] < 100 * r["imago"] else "> 100×"
    table = ["| operation | image | in → out | pyvips peer | Imago ms | pyvips 1 thr ms | pyvips "
             f"{threads} thr ms | Pillow ms | pyvips 1 thr ÷ Imago | Imago vs that pyvips result |", "|" + "---|" * 10]
    for r in rows:
        table.append(f"| {r['op']} | {r['image']} | {r['size']} → {r['out']} | {r['vips']} | {ms(r['imago'])} | "
                     f"{ms(r['vips1'])} | {ms(r['vipsN'])} | {ms(r['pillow'])} | {ratio(r)} | "
                     f"{r['diff'].split(': ', 1)[1]} |")
    details = [f"- **{r['op']}, {r['image']}** (Pillow: {r['pillow_name'] or 'no such operation'}): " + "; ".join(r["notes"])
               for r in rows if r["notes"]]
    slow = sorted(rows, key=lambda r: r["vips1"] / r["imago"])[:6]
    results = "\n".join([
        MARK_START, "",
        f"Written on {time.strftime('%Y-%m-%d')}. Machine: {machine}. Median of {ITERATIONS} runs after a warm-up, "
        f"operation only (decoded before timing). pyvips default = {threads} threads (one per core). Load average: "
        f"{load[0]:.1f} at the start, {load[1]:.1f} over the last 5 minutes (above 0 means other work shared the cores).", "",
        *table, "", "### Every comparison (max channel difference, PSNR, share of values more than 1 level apart; "
        "crops placed in their source as (x, y))", "", *details, "", "### Lowest ratios (pyvips 1 thread ÷ Imago)", "",
        *[f"- {r['op']}, {r['image']} ({r['vips']}): {r['vips1'] / r['imago']:.2f}× "
          f"(Imago {r['imago']:.2f} ms, pyvips {r['vips1']:.2f} ms)" for r in slow], "", MARK_END])
    target = os.path.join(HERE, "operations.md")
    text = open(target).read() if os.path.exists(target) else f"# Operations against pyvips and Pillow\n\n{MARK_START}\n{MARK_END}\n"
    if MARK_START in text and MARK_END in text:
        text = text[:text.index(MARK_START)] + results + text[text.index(MARK_END) + len(MARK_END):]
    else:
        text += "\n" + results + "\n"
    with open(target, "w") as f:
        f.write(text)
    print("\n".join(table))


if __name__ == "__main__":
    main()
