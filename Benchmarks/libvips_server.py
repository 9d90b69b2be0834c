#!/usr/bin/env python3
"""A libvips-class image server: the peer `Benchmarks/compare-server` measures
`imago serve` against, built the way imgproxy uses libvips.

Each request fetches its source with aiohttp (one keep-alive session per
process), renders it with pyvips' `thumbnail_buffer` (which shrinks JPEGs in
the DCT on load, then reduces with a box filter before its Lanczos pass,
libvips' own thumbnail path) and answers a JPEG saved at the requested
quality with the metadata stripped, as imgproxy does.

One process per core, each listening on the same port (SO_REUSEPORT) with its
own event loop; the rendering runs in a pool of as many threads as there are
cores (libvips releases the GIL), so a process whose connections are idle
does not leave a core unused while the other is busy. libvips itself runs
each operation on one thread (VIPS_CONCURRENCY=1), as a server with one
request per core wants.

Usage: libvips_server.py PORT [PROCESSES]
    GET /thumbnail?url=URL&width=256&height=256&quality=80
Prints "listening on PORT" once every process is accepting.
"""
import asyncio
import os
import signal
import socket
import sys
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("VIPS_CONCURRENCY", "1")

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402

pyvips = None  # imported in each process after the fork (libvips starts threads)

MAX_SOURCE_BYTES = 64 * 1024 * 1024


def render(data, width, height, quality):
    # fail=True: a damaged source is an error, not a partial image.
    image = pyvips.Image.thumbnail_buffer(data, width, height=height, size="down", fail_on="error")
    return image.jpegsave_buffer(Q=quality, keep="none")


async def thumbnail(request):
    query = request.query
    try:
        url = query["url"]
        width = int(query.get("width", "256"))
        height = int(query.get("height", str(width)))
        quality = int(query.get("quality", "80"))
    except (KeyError, ValueError):
        return web.Response(status=400, text="url, width, height and quality\n")
    app = request.app
    try:
        async with app["session"].get(url) as response:
            if response.status != 200:
                return web.Response(status=502, text=f"origin answered {response.status}\n")
            data = await response.content.read(MAX_SOURCE_BYTES + 1)
            if len(data) > MAX_SOURCE_BYTES:
                return web.Response(status=413, text="source too large\n")
    except aiohttp.ClientError as error:
        return web.Response(status=502, text=f"{error}\n")
    loop = asyncio.get_running_loop()
    try:
        body = await loop.run_in_executor(app["pool"], render, data, width, height, quality)
    except pyvips.Error as error:
        return web.Response(status=422, text=f"{error.message}\n")
    return web.Response(body=body, content_type="image/jpeg")


async def serve(listener):
    global pyvips
    import pyvips
    app = web.Application()
    app.router.add_get("/thumbnail", thumbnail)
    app["pool"] = ThreadPoolExecutor(max_workers=int(os.environ.get("LIBVIPS_SERVER_THREADS", os.cpu_count())))
    connector = aiohttp.TCPConnector(limit=256, limit_per_host=256)
    timeout = aiohttp.ClientTimeout(total=30)
    app["session"] = aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.SockSite(runner, listener).start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await runner.cleanup()
    await app["session"].close()


def listening_socket(port):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1024)
    listener.setblocking(False)
    return listener


def main():
    port = int(sys.argv[1])
    processes = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
    children = []
    for _ in range(processes):
        # Each process binds its own socket (SO_REUSEPORT) before the
        # parent says it listens, so no connection is refused.
        listener = listening_socket(port)
        pid = os.fork()
        if pid == 0:
            asyncio.run(serve(listener))
            os._exit(0)
        listener.close()
        children.append(pid)

    def stop(*_):
        for child in children:
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on {port}", flush=True)
    for child in children:
        while True:
            try:
                os.waitpid(child, 0)
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                break


if __name__ == "__main__":
    main()
