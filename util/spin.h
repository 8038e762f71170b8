// Whether a bounded busy wait costs anyone a CPU now (docs/critical.md, "Session 13").
//
// A thread that polls for an answer instead of sleeping saves the wake-up of its vCPU when the
// answer comes (~40-60 us on the 2-vCPU VMs cape is developed on, whose guest halt-polling is
// off), but only while nobody else wants that CPU: a spinner that yields to a runnable task
// gets the CPU back at the end of that task's slice, milliseconds later, while a sleeper is
// woken at once (wake-up preemption). Seen with CAPE_LOCK_SPIN_US=200 under a parallel build:
// a first entry of a lock took 3.5 ms instead of 0.1-0.15. So the spins ask this first, and
// again every few microseconds while they spin.
#pragma once

namespace cape::util {

// True when the host's runnable tasks (the caller included) fit on its online CPUs (the
// fourth field of /proc/loadavg, read at most every 16 us per thread). False when it cannot
// be read. With CAPE_SPIN_IDLE_ONLY=0: always true (spin whatever the load).
bool cpu_to_spare();

}  // namespace cape::util
