// Whether a bounded busy wait costs anyone a CPU now (docs/critical.md, "Session 13", "Session 15").
//
// A thread that polls for an answer instead of sleeping saves the wake-up of its vCPU when the
// answer comes (~40-60 us on the 2-vCPU VMs cape is developed on, whose guest halt-polling is
// off), but only while nobody else wants that CPU: a spinner that yields to a runnable task
// gets the CPU back at the end of that task's slice, milliseconds later, while a sleeper is
// woken at once (wake-up preemption). Seen with CAPE_LOCK_SPIN_US=200 under a parallel build:
// a first entry of a lock took 3.5 ms instead of 0.1-0.15. So the spins ask this first, and
// again every few microseconds while they spin.
#pragma once

#include <cstdint>

namespace cape::util {

// How cpu_to_spare() decides (CAPE_SPIN_GATE).
enum class SpinGate {
  // CAPE_SPIN_GATE=own (session 15): as `loadavg`, but the runnable threads of the job's
  // monitors on this host (this process and the other `cape node` processes the same parent
  // started: local nodes) are not counted. They run in short bursts and then sleep, most of
  // them waiting for what the spinner waits for; on a quiet host they alone filled the count,
  // so the spins never ran (session 14: 0 of 60 grants caught polling). The programs are
  // counted: a program computing its share holds its CPU for a whole slice. Not the default: on
  // a quiet host it opened the gate in a few checks only, and the first entry did not move.
  own,
  // The default (CAPE_SPIN_GATE=loadavg, sessions 13-14): the host's runnable tasks, the caller included,
  // fit on its online CPUs.
  loadavg,
  // CAPE_SPIN_GATE=job (for measurements): as `own`, the nodes' programs left out too.
  job,
  // CAPE_SPIN_IDLE_ONLY=0: always (spin whatever the load).
  always,
};

// The gate of CAPE_SPIN_GATE / CAPE_SPIN_IDLE_ONLY; throws std::invalid_argument naming the
// variable and the values it takes when CAPE_SPIN_GATE is something else.
SpinGate spin_gate_from_env();

// True when spinning takes no CPU another task wants (the gate above; /proc/loadavg's fourth
// field, read at most every 16 us per thread, and under `own`/`job`, when that does not fit,
// the states of the job's tasks here, /proc/PID/task/TID/stat). False when it cannot be read.
bool cpu_to_spare();

// What the gate saw (process-wide): checks that fit the CPUs as they are, that fit once the
// job's own tasks were left out, and that did not fit (the spin then sleeps).
// own_checks, own_ns: how many times the job's tasks were read and how long that took in all.
struct SpinGateStats {
  uint64_t fit = 0, fit_own = 0, closed = 0, own_checks = 0, own_ns = 0;
};
SpinGateStats spin_gate_stats();

// For tests and measurements: one reading now, under `gate` (own or job): the host's runnable
// tasks, how many of them are the job's tasks left out (the caller not included), of how many
// such tasks found here. Reads every task's state (no early stop).
struct SpinGateReading {
  long runnable = -1, own_runnable = 0, own_tasks = 0;
};
SpinGateReading spin_gate_read(SpinGate gate);

}  // namespace cape::util
