#include "monitor/data_sharing.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "util/error.h"

namespace cape::monitor {

namespace {
std::string hex(uint64_t v) { return ckpt::hex_address(v); }
}  // namespace

IntervalSet dynamic_memory(const std::vector<Area>& areas) {
  std::vector<IntervalSet::Interval> v;
  for (const Area& r : areas)
    if (r.kind == Area::heap || r.kind == Area::anon) v.emplace_back(r.start, r.end);
  return IntervalSet::of(std::move(v));
}

void DataSharing::declare(Attr a, uint64_t addr, uint64_t size, ckpt::Reduction red) {
  if (size == 0 || addr + size < addr) throw UserError("data-sharing call for " + hex(addr) + ": bad size " + std::to_string(size));
  std::vector<Var>& list = a == Attr::threadprivate ? threadprivate_ : next_vars_;
  for (Var& v : list)
    if (v.addr < addr + size && addr < v.addr + v.size) {
      if (v.addr == addr && v.size == size) {  // a later clause on the same variable wins
        v.attr = a;
        v.red = red;
        return;
      }
      throw UserError("data-sharing call for " + hex(addr) + " (" + std::to_string(size) +
                      " bytes) overlaps another variable at " + hex(v.addr));
    }
  list.push_back(Var{addr, size, a, red, {}});
}

void DataSharing::set_model(uint64_t model) {
  if (model != static_cast<uint64_t>(CkptModel::dickpt) && model != static_cast<uint64_t>(CkptModel::tickpt))
    throw UserError("cape_set_ckpt_model(" + std::to_string(model) + "): not CAPE_CKPT_DICKPT or CAPE_CKPT_TICKPT");
  model_ = static_cast<CkptModel>(model);
}

void DataSharing::set_order(int64_t order) {
  if (order < 0 || static_cast<uint64_t>(order) > kMaxOrder)
    throw UserError("cape_set_order(" + std::to_string(order) + "): out of range 0.." + std::to_string(kMaxOrder));
  order_ = order;
}

void DataSharing::begin(uint64_t region, const Tracee& t) {
  vars_ = std::move(next_vars_);
  next_vars_.clear();
  for (const Var& tp : threadprivate_) {
    bool named = false;
    for (const Var& v : vars_) named = named || (v.addr < tp.addr + tp.size && tp.addr < v.addr + v.size);
    if (!named) vars_.push_back(tp);
  }
  std::sort(vars_.begin(), vars_.end(), [](const Var& x, const Var& y) { return x.addr < y.addr; });
  default_none_ = next_default_none_;
  next_default_none_ = false;
  region_ = region;
  // Before tracking starts.
  for (Var& v : vars_) {
    if (v.attr != Attr::reduction && v.attr != Attr::priv && v.attr != Attr::firstprivate) continue;
    v.saved.assign(v.size, 0);
    t.read_bytes(v.addr, v.saved);
    if (v.attr == Attr::reduction) t.write_bytes(v.addr, ckpt::reduction_identity(v.red, v.size));
  }
}

void DataSharing::end(uint64_t region, const Tracee& t) {
  if (region_ != region) return;
  for (const Var& v : vars_)
    if ((v.attr == Attr::priv || v.attr == Attr::firstprivate) && !v.saved.empty()) t.write_bytes(v.addr, v.saved);
}

IntervalSet DataSharing::ranges(bool (*pred)(Attr)) const {
  std::vector<IntervalSet::Interval> v;
  for (const Var& x : vars_)
    if (pred(x.attr)) v.emplace_back(x.addr, x.addr + x.size);
  return IntervalSet::of(std::move(v));
}

IntervalSet DataSharing::threadprivate_ranges() const {
  std::vector<IntervalSet::Interval> v;
  for (const Var& x : threadprivate_) v.emplace_back(x.addr, x.addr + x.size);
  return IntervalSet::of(std::move(v));
}

IntervalSet DataSharing::registered() const {
  return ranges([](Attr a) { return !is_region_private(a); });
}

IntervalSet DataSharing::private_ranges(const AddressSpace& as, uint64_t boundary) const {
  IntervalSet drop = ranges(&is_region_private);
  if (!default_none_) return drop;
  IntervalSet travel = registered().unite(dynamic_memory(as.tracked(boundary)));
  return drop.unite(IntervalSet::everything().minus(travel));
}

// TICKPT: the stack from the region's frame up is shared as under DICKPT (minus what is
// registered private). The translator registers the region's function's locals it names, but a
// region in a kernel function writes main's arrays through its parameters (PolyBench's style),
// and OpenMP shares them: under TICKPT those writes were lost, silently (tests/ordinary's
// polykern.c). What else changes there (compiler temporaries, locals of the region body) is
// dead after the region, as DICKPT has always carried it. CAPE_TICKPT_STACK=0: the old way.
bool tickpt_stack() {  // (data_sharing.h)
  static const bool on = [] {
    const char* e = std::getenv("CAPE_TICKPT_STACK");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

namespace {
IntervalSet tickpt_memory(const std::vector<Area>& areas) {
  IntervalSet m = dynamic_memory(areas);
  if (!tickpt_stack()) return m;
  std::vector<IntervalSet::Interval> v;
  for (const Area& r : areas)
    if (r.kind == Area::stack) v.emplace_back(r.start, r.end);
  return m.unite(IntervalSet::of(std::move(v)));
}
}  // namespace

// (Reduction, lastprivate and copyin values are read whole at create(); private data is
// never compared.)
IntervalSet DataSharing::tickpt_cover(const std::vector<Area>& areas) const {
  std::vector<IntervalSet::Interval> v;
  for (const Var& x : vars_)
    if (x.attr == Attr::shared || x.attr == Attr::copyprivate) v.emplace_back(page_down(x.addr), page_up(x.addr + x.size));
  return IntervalSet::of(std::move(v)).unite(tickpt_memory(areas));
}

// TICKPT keeps only shared data (registered shared/copyprivate and dynamic memory, minus
// private); DICKPT keeps every write, as CAPE-2 did, and inject() leaves private data alone.
// Reduction and lastprivate values, and the master's copyin ones, are saved whole instead.
IntervalSet DataSharing::travels(const std::vector<Area>& now, bool master) const {
  IntervalSet forced = ranges([](Attr a) { return a == Attr::reduction || a == Attr::lastprivate; });
  IntervalSet copyin = ranges([](Attr a) { return a == Attr::copyin; });
  if (model_ == CkptModel::tickpt) {
    IntervalSet shared = ranges([](Attr a) { return a == Attr::shared || a == Attr::copyprivate; });
    return shared.unite(tickpt_memory(now)).minus(ranges(&is_region_private).unite(forced).unite(copyin));
  }
  return IntervalSet::everything().minus(master ? forced.unite(copyin) : forced);
}

ckpt::Checkpoint DataSharing::saved_values(const Tracee& t, uint64_t ts, int rank) const {
  ckpt::Checkpoint saved;
  uint64_t order = order_ >= 0 ? static_cast<uint64_t>(order_) : static_cast<uint64_t>(rank);
  for (const Var& v : vars_) {
    bool master_copyin = v.attr == Attr::copyin && rank == 0;
    if (v.attr != Attr::reduction && v.attr != Attr::lastprivate && !master_copyin) continue;
    std::vector<uint8_t> cur_value(v.size);
    t.read_bytes(v.addr, cur_value);
    if (master_copyin)
      saved.append(v.addr, cur_value, ts);
    else if (v.attr == Attr::reduction)
      saved.append(v.addr, cur_value, ts, v.red);
    else
      saved.append(v.addr, cur_value, ts + 1 + std::min(order, kMaxOrder));
  }
  return saved;
}

const Var* DataSharing::reduction_var(const ckpt::Run& r) const {
  const Var* var = nullptr;
  for (const Var& v : vars_)
    if (v.attr == Attr::reduction && v.addr == r.address && v.size == r.length && v.red == r.reduction &&
        v.saved.size() == v.size)
      var = &v;
  return var;
}

}  // namespace cape::monitor
