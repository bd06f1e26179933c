#!/usr/bin/env bash
# What following processes costs, measured on this machine:
#   attach:  from `dprobe attach` starting to the first hit recorded in a
#            process that calls the probed function without pause (ptrace
#            stop, loading the agent, arming, resuming);
#   arming:  `dprobe run` with every function of libc probed, against the
#            same run with one probe (the difference is resolving, placing
#            and arming about 2,500 probes);
#   memory:  resident memory the agent adds to a sleeping program, not
#            counting its rings (RssShmem), with one probe and with all of libc.
# Each figure is the median of 5 runs.
#   usage: bench/process_costs.sh      (after scripts/build.sh)
# DPROBE_BUILD=DIR takes dprobe from another build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DPROBE_BUILD:-build}
exec python3 - "$PWD/$build/dprobe" "$PWD/build/bench/hit_loop" <<'PY'
import os, re, signal, statistics, subprocess, sys, time

dprobe, hit_loop = sys.argv[1], sys.argv[2]

def attach_latency():
    target = subprocess.Popen([hit_loop, "100000000000"], stdout=subprocess.DEVNULL)
    time.sleep(0.2)
    start = time.monotonic()
    cli = subprocess.Popen([dprobe, "attach", "-p", str(target.pid), "--duration", "0.5",
                            "-e", "p:bench/t bench_target"], stdout=subprocess.PIPE, text=True)
    first = cli.stdout.readline()
    cli.stdout.read()
    cli.wait()
    target.kill()
    target.wait()
    stamp = float(re.search(r" (\d+\.\d+): ", first).group(1))  # CLOCK_MONOTONIC
    return (stamp - start) * 1e3

def run_seconds(definition):
    start = time.monotonic()
    subprocess.run([dprobe, "run", "-e", definition, "-o", "/dev/null", "--", hit_loop, "1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start

def rss_kib(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key.startswith("Rss"):
                fields[key] = int(value.split()[0])
    return fields["RssAnon"] + fields["RssFile"]  # RssShmem: the rings

def sleeping_rss(command):
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    pid = process.pid
    if command[0] == dprobe:  # the traced sleep is dprobe's child
        pid = int(subprocess.check_output(["pgrep", "-P", str(process.pid)]).split()[0])
    kib = rss_kib(pid)
    os.kill(pid, signal.SIGTERM)
    process.wait()
    return kib

def median(function, *args):
    return statistics.median(function(*args) for _ in range(5))

latency = median(attach_latency)
print(f"attach, until the first hit:      {latency:8.1f} ms   (target < 100 ms)")
one = median(run_seconds, "p:bench/malloc libc.so.6:malloc")
every = median(run_seconds, "p libc.so.6:*")
print(f"run, one probe:                   {one * 1e3:8.1f} ms")
print(f"run, every function of libc:      {every * 1e3:8.1f} ms   "
      f"(arming them: {(every - one) * 1e3:.1f} ms, target < 1000 ms)")
plain = median(sleeping_rss, ["sleep", "5"])
traced = median(sleeping_rss, [dprobe, "run", "-e", "p:bench/n libc.so.6:clock_nanosleep",
                               "--", "sleep", "5"])
wide = median(sleeping_rss, [dprobe, "run", "-o", "/dev/null", "-e", "p libc.so.6:*",
                             "--", "sleep", "5"])
print(f"agent memory, one probe:          {(traced - plain) / 1024:8.2f} MiB (target < 8 MiB)")
print(f"agent memory, every libc function:{(wide - plain) / 1024:8.2f} MiB")
PY
