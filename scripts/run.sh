#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: installs only what it needs
# (scripts/install-deps.sh --main), builds only the CLI and the agent
# (scripts/build.sh --main: no tests, benchmarks, fuzzers or arm64 cross
# build; scripts/test.sh builds those), and traces real programs of the
# machine: ls opening directories (libc's opendir, the path fetched as a
# string), then sqlite3 preparing its statements, with the profile of hits
# at the end; then attaches for a second to a python3 loop that is already
# running, and detaches; last, python3's mallocs by size as the kernel's
# hist trigger prints them, counted inside the process. Each run lists its
# probes first: [OPTIMIZED] (a jump to a trampoline) or [BREAKPOINT: why not].
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --main
scripts/build.sh --main
set -x
build/dprobe run --probes -e 'p:ls/opendir libc.so.6:opendir path=+0(%di):string' -- ls /usr /etc/apt
build/dprobe run --summary -e syscalls:sys_enter_openat -e syscalls:sys_exit_openat \
  -e 'e:io/open syscalls/sys_enter_openat path=+0($filename):ustring' -- ls /etc/apt
build/dprobe run --profile --probes \
  -e 'p:sqlite/prepare libsqlite3.so.0:sqlite3_prepare_v2 sql=+0(%si):string' \
  -e 'p:sqlite/step libsqlite3.so.0:sqlite3_step' \
  -- sqlite3 :memory: 'create table t(a); insert into t values (1), (2); select sum(a) from t;'
/usr/bin/python3 -c 'import time
for _ in range(100): time.sleep(0.05)' &
sleep 0.5  # its start-up done: the loop runs
build/dprobe attach -p $! --duration 1 --profile --probes \
  -e 'p:py/nap libc.so.6:clock_nanosleep' -e 'r:py/malloc libc.so.6:malloc rv=$retval'
wait
build/dprobe run -e 'p:m/malloc libc.so.6:malloc size=%di:u64' \
  --trigger 'm/malloc:hist:keys=size.log2:sort=hitcount.descending' -- python3 -c 'print(1)'

