"""A load client for Benchmarks/compare-server.

    python server_load.py URL_FILE [CONCURRENCY]

Requests every URL of URL_FILE (one per line) exactly once, CONCURRENCY
(default 16) in flight at once over one aiohttp session whose connector
allows CONCURRENCY connections, and prints one JSON line: requests,
failures (a status other than 200, or an exception), seconds, requests_per_s,
p50_ms and p99_ms (each request's latency, from sending it to having read the
whole body), bytes (of the bodies of successful responses) and client_cpu_s
(the CPU time this client used).
"""
import asyncio
import json
import sys
import time

import aiohttp


def percentile(sorted_values, fraction):
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


async def main(urls, concurrency):
    queue = asyncio.Queue()
    for url in urls:
        queue.put_nowait(url)
    latencies = []
    failures = 0
    total_bytes = 0
    errors = {}

    async def worker(session):
        nonlocal failures, total_bytes
        while True:
            try:
                url = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            started = time.perf_counter()
            try:
                async with session.get(url) as response:
                    body = await response.read()
                    ok = response.status == 200
                    key = f"status {response.status}"
            except Exception as error:  # noqa: BLE001 - every failure counts
                ok, body, key = False, b"", type(error).__name__
            latencies.append((time.perf_counter() - started) * 1000)
            if ok:
                total_bytes += len(body)
            else:
                failures += 1
                errors[key] = errors.get(key, 0) + 1

    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    timeout = aiohttp.ClientTimeout(total=300)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    latencies.sort()
    result = {
        "requests": len(urls), "concurrency": concurrency, "failures": failures,
        "seconds": round(seconds, 4), "requests_per_s": round(len(urls) / seconds, 2),
        "p50_ms": round(percentile(latencies, 0.50), 2), "p99_ms": round(percentile(latencies, 0.99), 2),
        "bytes": total_bytes, "client_cpu_s": round(cpu, 3),
    }
    if errors:
        result["errors"] = errors
    print(json.dumps(result))


if __name__ == "__main__":
    with open(sys.argv[1]) as file:
        urls = [line.strip() for line in file if line.strip() and not line.startswith("#")]
    asyncio.run(main(urls, int(sys.argv[2]) if len(sys.argv) > 2 else 16))
