#!/usr/bin/env python3
"""The peer of `imago bench pipeline`: fetch every URL with asyncio and
aiohttp, decode and thumbnail to 256 px with Pillow (draft mode for JPEG),
with the same number of requests in flight; the Pillow work runs in a thread
pool as wide as the machine (Pillow releases the GIL while decoding).

Usage: pipeline_asyncio_pillow.py URLS_FILE CONCURRENCY
Prints one JSON line: {"client": "asyncio+Pillow", "images": N, "seconds": S, "images_per_s": R, "failures": F}
"""
import asyncio
import io
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import aiohttp
from PIL import Image


def thumbnail(data):
    image = Image.open(io.BytesIO(data))
    image.draft("RGB", (256, 256))
    image.thumbnail((256, 256))
    return image.size


async def main(urls, concurrency):
    executor = ThreadPoolExecutor(max_workers=os.cpu_count())
    loop = asyncio.get_running_loop()
    semaphore = asyncio.Semaphore(concurrency)
    failures = 0

    async def load(session, url):
        nonlocal failures
        async with semaphore:
            try:
                async with session.get(url) as response:
                    response.raise_for_status()
                    data = await response.read()
                await loop.run_in_executor(executor, thumbnail, data)
            except Exception:
                failures += 1

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        started = time.perf_counter()
        await asyncio.gather(*(load(session, url) for url in urls))
        seconds = time.perf_counter() - started
    print(json.dumps({"client": "asyncio+Pillow", "images": len(urls), "seconds": round(seconds, 3),
                      "images_per_s": round(len(urls) / seconds, 1), "failures": failures}))


if __name__ == "__main__":
    urls = [line.strip() for line in open(sys.argv[1]) if line.strip()]
    asyncio.run(main(urls, int(sys.argv[2])))
