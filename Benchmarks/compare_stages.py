#!/usr/bin/env python3
"""The stages of libvips' thumbnail render, timed as `imago bench stages`
times Imago's, on the same files (one thread, libvips' operation cache off).

    header   new_from_buffer (libvips reads the header only, lazily)
    decode   the decode libvips' thumbnail makes: JPEG with the shrink-on-load
             factor thumbnail picks (it leaves at least a factor of two for the
             resize), other formats whole; into memory (copy_memory)
    resize   resize() of that to fit the box (box shrink, then Lanczos 3 reduce)
    encode   jpegsave_buffer at the quality, metadata stripped
    render   thumbnail_buffer + jpegsave_buffer: libvips' own fused, streaming
             path (what the libvips-class server runs)

Usage: compare_stages.py ITERATIONS MAX_SIZE QUALITY FILE...
Prints one JSON line per file with each stage's median in milliseconds.
"""
import json
import os
import statistics
import sys
import time

os.environ["VIPS_CONCURRENCY"] = "1"
import pyvips  # noqa: E402

pyvips.cache_set_max(0)


def timed(iterations, work):
    work()
    runs = []
    for _ in range(iterations):
        started = time.perf_counter()
        work()
        runs.append((time.perf_counter() - started) * 1000)
    return statistics.median(runs)


def jpeg_shrink(width, height, box):
    # libvips' thumbnail: shrink-on-load to at least twice the target.
    shrink = max(width, height) / box
    return 8 if shrink >= 16 else 4 if shrink >= 8 else 2 if shrink >= 4 else 1


def main():
    iterations, box, quality = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    for path in sys.argv[4:]:
        data = open(path, "rb").read()
        header = pyvips.Image.new_from_buffer(data, "")
        loader = header.get("vips-loader")
        is_jpeg = loader.startswith("jpeg")
        load_options = {"shrink": jpeg_shrink(header.width, header.height, box)} if is_jpeg else {}

        def decode():
            return pyvips.Image.new_from_buffer(data, "", access="sequential", **load_options).copy_memory()

        decoded = decode()
        scale = box / max(decoded.width, decoded.height)

        def resize():
            return decoded.resize(scale).copy_memory()

        resized = resize()
        stages = {
            "header_ms": timed(iterations, lambda: pyvips.Image.new_from_buffer(data, "").width),
            "decode_ms": timed(iterations, decode),
            "resize_ms": timed(iterations, resize),
            "encode_ms": timed(iterations, lambda: resized.jpegsave_buffer(Q=quality, keep="none")),
            "render_ms": timed(iterations, lambda: pyvips.Image.thumbnail_buffer(
                data, box, height=box, size="down").jpegsave_buffer(Q=quality, keep="none")),
        }
        print(json.dumps({"source": path, "format": "jpeg" if is_jpeg else loader.replace("load_buffer", ""),
                          "width": header.width, "height": header.height,
                          "decoded_width": decoded.width, "decoded_height": decoded.height, **stages}), flush=True)


if __name__ == "__main__":
    main()
