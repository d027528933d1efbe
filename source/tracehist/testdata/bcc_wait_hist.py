#!/usr/bin/python3
# bcc_syscall_wait_hist.py: wait-time histograms per "event" in the shape of the
# bcc-based Oracle wait-histogram scripts (print_log2_hist with a free-text
# value label and a section per event), here over the read/write/sync/sleep
# system calls of one process because no Oracle server runs on this machine.
# Usage: bcc_syscall_wait_hist.py PID INTERVAL COUNT
import sys
from time import sleep, strftime
from bcc import BPF
from bcc.syscall import syscall_name

pid, interval, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
prog = """
struct key_t { u32 nr; u64 slot; };
BPF_HASH(start, u32, u64);
BPF_HASH(nr_of, u32, u32);
BPF_HISTOGRAM(dist, struct key_t);
TRACEPOINT_PROBE(raw_syscalls, sys_enter) {
    u32 tid = bpf_get_current_pid_tgid();
    if ((bpf_get_current_pid_tgid() >> 32) != PID) return 0;
    u32 nr = args->id;
    u64 ts = bpf_ktime_get_ns();
    start.update(&tid, &ts);
    nr_of.update(&tid, &nr);
    return 0;
}
TRACEPOINT_PROBE(raw_syscalls, sys_exit) {
    u32 tid = bpf_get_current_pid_tgid();
    u64 *tsp = start.lookup(&tid);
    u32 *nrp = nr_of.lookup(&tid);
    if (tsp == 0 || nrp == 0) return 0;
    struct key_t key = {.nr = *nrp, .slot = bpf_log2l((bpf_ktime_get_ns() - *tsp) / 1000)};
    dist.increment(key);
    start.delete(&tid);
    nr_of.delete(&tid);
    return 0;
}
""".replace("PID", str(pid))
b = BPF(text=prog)
print("Tracing wait events of process %d, wait time in microseconds, every %d s..." % (pid, interval))
print("Hit Ctrl-C to end.")
dist = b["dist"]
for _ in range(count):
    sleep(interval)
    print()
    print(strftime("%H:%M:%S"))
    dist.print_log2_hist("wait time, microsec", "event",
                         section_print_fn=lambda nr: syscall_name(nr).decode())
    dist.clear()
    sys.stdout.flush()
