"""The driver of Benchmarks/compare-cores: runs each client pinned to one core
and to two, alternating, and prints the Markdown report (see the script)."""
import os, platform, shutil, statistics, subprocess, sys, time

work, port, passes, rounds, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
names = sorted(os.listdir("Benchmarks/.images/server"))
urls = [f"http://127.0.0.1:{port}/server/{name}?pass={n}" for n in range(passes) for name in names]
listing = os.path.join(work, "realistic.txt")
open(listing, "w").write("".join(url + "\n" for url in urls))
imago = "Tools/.build/release/imago"
python = "Benchmarks/.venv/bin/python"


def fetch(cache):
    def command():
        output = os.path.join(work, "out")
        shutil.rmtree(output, ignore_errors=True)
        shutil.rmtree(os.path.join(work, "cache"), ignore_errors=True)
        caching = ["--cache-dir", os.path.join(work, "cache")] if cache else ["--no-cache"]
        return [imago, "fetch", "--input", listing, "--max-size", "256", "--format", "jpeg", "--output", output,
                "--concurrency", concurrency, "--json", *caching]
    return command


clients = {
    "imago bench pipeline": lambda: [imago, "bench", "pipeline", "--input", listing, "--concurrency", concurrency, "--json"],
    "imago fetch, no cache": fetch(False),
    "imago fetch, disk cache": fetch(True),
    "asyncio + aiohttp + Pillow": lambda: [python, "Benchmarks/pipeline_asyncio_pillow.py", listing, concurrency],
}
cpus = {1: "0", 2: "0,1"}


def run(client, cores):
    """Wall seconds and CPU seconds (user + system) of one pinned run."""
    start = time.perf_counter()
    process = subprocess.Popen(["taskset", "-c", cpus[cores], *clients[client]()], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"compare_cores: {client} on {cores} core(s) failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime


results = {(client, cores): [] for client in clients for cores in cpus}
for client in clients:   # warm-up: connections, page cache, bytecode
    run(client, 2)
for round_number in range(rounds):
    order = [(client, cores) for client in clients for cores in cpus]
    for key in (order if round_number % 2 == 0 else reversed(order)):
        results[key].append(run(*key))
        print(f"round {round_number + 1}: {key[0]} on {key[1]} core(s): {results[key][-1][0]:.2f} s", file=sys.stderr)

count = len(urls)
print("# Both cores: CPU per image and wall-clock efficiency\n")
print(f"Written by `Benchmarks/compare-cores` on {time.strftime('%Y-%m-%d')} ({platform.machine()}, {os.cpu_count()} cores): "
      f"the realistic mix of `compare-pipeline` ({count} images: {len(names)} photo-like files of 0.3-1.5 MP, a quarter PNG, "
      f"each under {passes} distinct URLs) from nginx on loopback, 256 px thumbnails, concurrency {concurrency}. "
      f"Each client is pinned with `taskset` to core 0, then to cores 0 and 1; {rounds} rounds in alternating order, "
      "medians. CPU is the client's user + system time (nginx runs unpinned and is not counted). "
      "Efficiency = throughput on 2 cores / (2 x throughput on 1 core).\n")
print("| client | images/s, 1 core | images/s, 2 cores | CPU ms per image, 1 core | CPU ms per image, 2 cores | efficiency at 2 cores |")
print("|---|---|---|---|---|---|")
for client in clients:
    one = [(count / wall, cpu * 1000 / count) for wall, cpu in results[(client, 1)]]
    two = [(count / wall, cpu * 1000 / count) for wall, cpu in results[(client, 2)]]
    rate1, rate2 = statistics.median(r for r, _ in one), statistics.median(r for r, _ in two)
    cpu1, cpu2 = statistics.median(c for _, c in one), statistics.median(c for _, c in two)
    print(f"| {client} | {rate1:.1f} | {rate2:.1f} | {cpu1:.2f} | {cpu2:.2f} | {rate2 / (2 * rate1):.0%} |")
