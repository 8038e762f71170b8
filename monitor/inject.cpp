#include "monitor/inject.h"

#include <sys/syscall.h>

#include "ckpt/ops.h"
#include "injector/injector.h"
#include "monitor/ckpt_ranges.h"
#include "monitor/map_changes.h"
#include "monitor/remote_syscall.h"

namespace cape::monitor {

namespace {
void write(const StoppedThread& st, const ckpt::Checkpoint& c, Window& window) {
  if (window.before_inject) window.before_inject(c);
  if (window.is_open())
    for (const ckpt::Run& r : c.runs) window.tracker().before_write(st, r.address, r.end());
  // Between windows the tracker may keep its copies current from the checkpoint itself
  // (not under --sync=lazy, whose invalid pages the tracker must not vouch for).
  const bool take = !window.is_open() && !window.before_inject;
  IntervalSet taken = take ? window.tracker().before_inject(st, c) : IntervalSet();
  injector::write_checkpoint(st.tracee.pid(), st.tracee.mem_fd(), c);
  if (!taken.empty()) window.tracker().after_inject(st, c, taken);
}
}  // namespace

void inject(const StoppedThread& st, const ckpt::Checkpoint& c, const std::string& name, Window& window,
            const AddressSpace& as, const DataSharing& sharing, uint64_t boundary) {
  // Region numbers must agree between nodes (timestamps, 002 Def. 4.2); a master that runs
  // extra regions of its own (a translator's copyin step, a serial start()/stop()) is ahead.
  // A slave takes the region number from what it injects before its start(): the next
  // start() gets the master's number.
  uint64_t region = region_of_timestamp(c.timestamp);
  // The translator's `copyin` is made in a window of its own that the master closed before
  // broadcasting it: the master's next start() is one past it, so the slave takes its number
  // whole (with region - 1, the slaves' parts of a `parallel copyin(...)` region were a region
  // behind the master's, whose later timestamp then won every run they overlapped: words the
  // slaves wrote next to the master's were lost, silently; tests/omp/copyin_neighbours.c).
  if (!window.is_open() && name == "copyin" && region > window.region()) window.set_region(region);
  else if (!window.is_open() && region > window.region() + 1) window.set_region(region - 1);
  // Nothing to write (a region where no node changed a word): no tracked set to check against
  // (issue 14, docs/monitor.md "Eighth pass").
  if (c.runs.empty() && c.mappings.empty()) return;
  // Memory another node mapped or grew (its heap, inside the region) exists here first.
  std::string what = "inject(\"" + name + "\")";
  if (!c.mappings.empty()) {
    std::vector<MapOp> ops = plan_replay(c.mappings, read_maps(as.pid()), what);
    // A protection change of tracked memory inside a window goes through the tracker first:
    // the mprotect tracker's read-only pages opened by the replay would take writes unseen.
    if (window.is_open())
      for (const MapOp& op : ops)
        if (op.kind == MapOp::mprotect) window.tracker().before_write(st, op.start, op.end);
    if (window.before_map_call)
      for (const MapOp& op : ops) {
        uint64_t args[6] = {op.start, op.end - op.start, 0, 0, 0, 0};
        if (op.kind == MapOp::munmap) window.before_map_call(SYS_munmap, args);
        if (op.kind == MapOp::brk) window.before_map_call(SYS_brk, {op.end, 0, 0, 0, 0, 0});
      }
    if (!ops.empty()) {
      AutoRemoteSyscalls remote(as.pid(), st.tid, st.gadget);
      run_replay(remote, ops, what);
      remote.restore();
    }
  }
  std::vector<injector::Range> allowed;
  for (auto [s, e] : spans_of(as.tracked(boundary))) allowed.push_back({s, e});
  injector::check_inside(c, allowed, what);  // before writing anything
  if (!sharing.applies_to(c.timestamp) || sharing.empty()) return write(st, c, window);
  // A checkpoint of the region the table belongs to: private data is never overwritten
  // (default(none): nothing but the registered shared variables and dynamic memory), and
  // a reduction variable gets original op merged partial results (restored first).
  const IntervalSet priv = sharing.private_ranges(as, boundary);
  // Nothing to cut or resolve (a region's merged result, mostly): written as it is, not
  // copied twice first (issue 14: 2 x 31 MB per Jacobi 2000 sweep on every node).
  bool as_is = true;
  for (const ckpt::Run& r : c.runs)
    if (r.reduction.active() || priv.overlaps(r.address, r.end())) {
      as_is = false;
      break;
    }
  if (as_is) return write(st, c, window);
  ckpt::Checkpoint w = clip_to(c, IntervalSet::everything().minus(priv));
  ckpt::Checkpoint resolved;
  resolved.kind = w.kind;
  for (const ckpt::Run& r : w.runs) {
    const Var* var = r.reduction.active() ? sharing.reduction_var(r) : nullptr;
    if (!var) {
      resolved.append_from(w, r);
      continue;
    }
    std::vector<uint8_t> value = var->saved;
    ckpt::reduce(r.reduction, value, w.data(r));
    resolved.append(r.address, value, r.timestamp);
  }
  write(st, resolved, window);
}

}  // namespace cape::monitor
