#!/usr/bin/env python3
"""An origin with a round trip: serves the files under a folder, each answer
held back LATENCY_MS first, as a bucket or CDN in the same region answers
(about 20 ms to the first byte) rather than nginx on loopback (well under 1).
For Benchmarks/compare-workers: how many downloads the image server needs in
flight to keep its workers busy.

Usage: slow_origin.py PORT FOLDER LATENCY_MS
Prints "listening on PORT" once it accepts.
"""
import asyncio
import os
import sys

from aiohttp import web


async def main():
    port, folder, latency = int(sys.argv[1]), os.path.realpath(sys.argv[2]), float(sys.argv[3]) / 1000
    cache = {}

    async def serve(request):
        path = os.path.realpath(os.path.join(folder, request.match_info["path"]))
        if not path.startswith(folder + os.sep) or not os.path.isfile(path):
            return web.Response(status=404)
        if path not in cache:
            cache[path] = open(path, "rb").read()
        await asyncio.sleep(latency)
        return web.Response(body=cache[path], content_type="application/octet-stream")

    app = web.Application()
    app.router.add_get("/{path:.+}", serve)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print(f"listening on {port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
