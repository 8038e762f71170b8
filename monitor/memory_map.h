// /proc/PID/maps and the tracked set (../shared/ARCHITECTURE.md, "Dirty tracking";
// docs/monitor.md lists exactly what is in it).
//
// Tracked: writable private mappings of the executable (.data, .relro is read-only so not),
// the anonymous mapping that continues them (.bss beyond the file), [heap], the main
// [stack] from the runtime call's frame boundary up, and anonymous private writable
// mappings. Not tracked: shared libraries' data, shared mappings, [vdso]/[vvar], file
// mappings of other files, and other threads' stacks (anonymous mappings whose lowest page
// is a PROT_NONE guard: glibc's thread stacks, which also hold TLS), and the mapping
// holding the main thread's TLS (three pages, see below).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "monitor/interval_set.h"

namespace cape::monitor {

struct Mapping {
  uint64_t start = 0, end = 0;
  bool read = false, write = false, exec = false, shared = false;
  uint64_t offset = 0;
  std::string path;  // "" for anonymous, "[heap]", "[stack]", ...
};

std::vector<Mapping> read_maps(pid_t pid);
// What read_maps(pid) answers from when it keeps a cache for `pid` (the supervisor's program,
// below), without a copy, and a stamp that is new whenever those maps were read again (so
// that what is computed from them can be kept: AddressSpace::tracked); nullptr otherwise.
// Valid until the next read_maps or cached_maps of this thread.
const std::vector<Mapping>* cached_maps(pid_t pid, uint64_t* stamp);

// The mappings of a stopped program change only when it runs or makes a syscall, or when
// the monitor changes them (a userfaultfd registration splits them). For the program of
// maps_cache_for(pid) (the supervisor's), read_maps answers from its last read until
// maps_may_change() is called: by every place that changes the mappings from outside (a
// remote mapping syscall, a gadget, a userfaultfd (un)registration) and, without a trusted
// `signal` (maps_signal.h), by every place that lets the program run (PTRACE_CONT, a single
// step). With one, the program's own mapping calls are counted by the signal and the cache
// lasts across stops (issue 14: an empty region read the maps ~10 times on 3 nodes, 13.5%
// of the job's CPU). Per thread of the monitor; pid 0 turns the cache off.
class MapsSignal;
void maps_cache_for(pid_t pid, const MapsSignal* signal = nullptr);
void maps_may_change();
// A thread of the cached program stopped with stack pointer `sp`: the main stack grows on a
// fault, without a system call; a stack pointer outside every cached mapping means the maps
// are stale.
void maps_check_stack(uint64_t sp);
// Does a trusted signal vouch for the cached maps of `pid` (so that other hints, such as
// /proc/PID/statm, are not needed)?
bool maps_signal_vouches(pid_t pid);
// What has changed the mappings of the cached program so far, as far as the monitor can
// tell: equal epochs mean no mapping call of the program's (the signal's count, with none
// under way) and none of the monitor's (maps_may_change) happened in between. signal == 0:
// unknown (no trusted signal for `pid`), never equal to anything.
struct MapsEpoch {
  uint64_t signal = 0, monitor = 0;
  bool known() const { return signal != 0; }
  bool operator==(const MapsEpoch& o) const { return known() && signal == o.signal && monitor == o.monitor; }
};
MapsEpoch maps_epoch(pid_t pid);

// A piece of the tracked set: a span of one mapping, with what it is. ("Region" in cape
// means a parallel region, never memory.)
struct Area {
  uint64_t start = 0, end = 0;  // page aligned, except `start` of the stack (the boundary)
  int prot = 0;                 // PROT_* the program had
  enum Kind { data, bss, heap, stack, anon } kind = anon;
  uint64_t size() const { return end - start; }
  bool contains(uint64_t a) const { return a >= start && a < end; }
};
const char* to_string(Area::Kind k);

// `exe` is the executable's path (/proc/PID/exe); `stack_boundary` the lowest stack
// address that belongs to the program (0 = whole stack); `tls` the main thread's thread
// pointer (fs_base): the pages around it hold the static TLS block below it and glibc's
// thread descriptor with the rseq area above it, which the kernel writes on returns to
// user mode; the page before, the one holding it and the one after are never tracked
// (0 = unknown). Only those pages: ld.so's mapping around them merges with the program's
// own anonymous mmaps.
// Sorted by address.
// `tls_low` (0 = unknown): the lowest address of the static TLS blocks in use (from the
// main thread's DTV); when known, the untracked pages start at its page instead of the page
// before the thread pointer's, so that a program's mapping merged right below keeps its
// last page.
std::vector<Area> tracked_set(const std::vector<Mapping>& maps, const std::string& exe,
                                uint64_t stack_boundary, uint64_t tls, uint64_t tls_low = 0);

// The executable's load base: the start of its first mapping (0 if not found).
uint64_t load_base(const std::vector<Mapping>& maps, const std::string& exe);

// The addresses of `areas`.
IntervalSet spans_of(const std::vector<Area>& areas);
// The parts of `areas` inside `cover` (kind and protection kept).
std::vector<Area> restrict_areas(const std::vector<Area>& areas, const IntervalSet& cover);

}  // namespace cape::monitor
