"""Reference points for Benchmarks/raw/next_codecs.c: how long Python's image
libraries take to decode the same AVIF/HEIC files fully into 8-bit RGB(A).

    .venv/bin/python raw/next_codecs_peers.py LIB FILE ITERATIONS [THREADS]
    .venv/bin/python raw/next_codecs_peers.py --matrix DIR ROUNDS

LIB: pillow (Pillow >= 11.2, native AVIF through its bundled libavif + dav1d;
max_threads = THREADS), pillow-heif (HEIC through its bundled libheif +
libde265; options.DECODE_THREADS = THREADS), pyvips (heifload, AVIF only in
the pyvips-binary wheel: it has no libde265 and no jxlload;
concurrency = THREADS, operation cache off, result written to memory).
With THREADS = 1 the process is pinned to one CPU, as next_codecs does
(PIN=0 to not pin). One warm-up run, then ITERATIONS timed runs; prints one
JSON line like next_codecs: min and median ms, peak RSS (ru_maxrss).
--matrix runs every library on DIR/photo-{1mp,12mp}.{avif,heic} with 1 and
2 threads, one process each, ROUNDS times round-robin.
"""
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def decoder(lib, threads):
    if lib == "pillow":
        from PIL import AvifImagePlugin, Image

        AvifImagePlugin.DEFAULT_MAX_THREADS = threads

        def run(data):
            with Image.open(io.BytesIO(data)) as im:
                im.load()
                return im.size, im.mode

    elif lib == "pillow-heif":
        import pillow_heif
        from PIL import Image

        pillow_heif.options.DECODE_THREADS = threads
        pillow_heif.register_heif_opener()

        def run(data):
            with Image.open(io.BytesIO(data)) as im:
                im.load()
                return im.size, im.mode

    elif lib == "pyvips":
        import pyvips

        pyvips.cache_set_max(0)
        pyvips.concurrency_set(threads)

        def run(data):
            im = pyvips.Image.new_from_buffer(data, "", access="sequential")
            pixels = im.write_to_memory()
            assert len(pixels) == im.width * im.height * im.bands
            return (im.width, im.height), f"{im.bands} bands"

    else:
        raise SystemExit(f"unknown library {lib}")
    return run


def measure(lib, path, iterations, threads):
    if threads == 1 and os.environ.get("PIN", "1") != "0":
        os.sched_setaffinity(0, {os.sched_getaffinity(0).pop()})
    data = open(path, "rb").read()
    run = decoder(lib, threads)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    size, mode = run(data)  # warm-up
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        run(data)
        times.append((time.perf_counter() - t0) * 1e3)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"mode": lib, "file": path, "threads": threads, "size": f"{size[0]}x{size[1]} {mode}",
                      "min_ms": round(min(times), 2), "median_ms": round(statistics.median(times), 2),
                      "rss_before_mb": round(rss_before / 1024, 1), "peak_rss_mb": round(rss / 1024, 1)}))


def matrix(folder, rounds):
    configs = []
    for name in ["photo-1mp", "photo-12mp"]:
        for threads in (1, 2):
            configs += [("pillow", f"{name}.avif", threads), ("pyvips", f"{name}.avif", threads),
                        ("pillow-heif", f"{name}.heic", threads)]
    for threads in (1, 2):
        configs.append(("pillow-heif", "photo-12mp-grid.heic", threads))
    for _ in range(rounds):
        for lib, name, threads in configs:
            iterations = 6 if "12mp" in name else 20
            subprocess.run([sys.executable, __file__, lib, os.path.join(folder, name), str(iterations), str(threads)],
                           check=True)


if __name__ == "__main__":
    if sys.argv[1] == "--matrix":
        matrix(sys.argv[2], int(sys.argv[3]))
    else:
        measure(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 1)
