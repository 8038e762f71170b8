// The data-sharing table of a parallel region (002_2c61c2cb27f62a9a.txt Sect. 4, Table 2;
// docs/tickpt.md): the clause calls made before a region's start() (cape_set_shared ...,
// cape_reduction) say what each variable is; start() makes them the region's table, and
// create(), inject() and the race check ask it what travels and what stays private.
//
//   sharing.declare(Attr::priv, &x, sizeof x);     // clause calls, before start()
//   sharing.begin(region, tracee);                 // start(): the table is the region's
//   IntervalSet t = sharing.travels(now, master);  // create(): what the checkpoint keeps
//   sharing.end(region, tracee);                   // stop(): private copies end
#pragma once

#include <cstdint>
#include <vector>

#include "ckpt/checkpoint.h"
#include "monitor/address_space.h"
#include "monitor/interval_set.h"
#include "monitor/memory_map.h"
#include "monitor/tracee.h"

namespace cape::monitor {

// Run timestamps (002 Def. 4.2): the region number in the upper bits, identical on every
// node, so that the merge sees two nodes' writes of one region as simultaneous; the lower
// bits order the nodes' values of lastprivate variables inside one region (later wins).
inline constexpr int kRegionShift = 20;
inline constexpr uint64_t kMaxOrder = (uint64_t{1} << kRegionShift) - 2;
inline uint64_t region_timestamp(uint64_t region) { return region << kRegionShift; }
inline uint64_t region_of_timestamp(uint64_t timestamp) { return timestamp >> kRegionShift; }

// cape_set_ckpt_model()'s values (runtime/include/cape/cape.h).
enum class CkptModel { dickpt = 0, tickpt = 1 };

// TICKPT lets the stack from the region's frame up travel as DICKPT does (CAPE_TICKPT_STACK
// is not 0; data_sharing.cpp).
bool tickpt_stack();
enum class Attr { shared, priv, firstprivate, lastprivate, copyin, copyprivate, threadprivate, reduction };
inline bool is_private(Attr a) { return a == Attr::priv || a == Attr::firstprivate || a == Attr::threadprivate; }
// copyin: the master's copy travels into the region (in its checkpoints, "before"), the
// nodes' copies never come back (threadprivate): private for results and conflicts.
inline bool is_region_private(Attr a) { return is_private(a) || a == Attr::copyin; }

struct Var {
  uint64_t addr = 0, size = 0;
  Attr attr = Attr::shared;
  ckpt::Reduction red;
  std::vector<uint8_t> saved;  // reduction: the original value; private: the value to restore
};

// Objects with dynamic storage duration are shared (002 Sect. 3.1, 4.1 rule 2): the heap and
// anonymous private mappings (malloc's large blocks, the program's own mmaps).
IntervalSet dynamic_memory(const std::vector<Area>& areas);

class DataSharing {
 public:
  // A clause call for the next region. Throws UserError for a bad size or a variable that
  // overlaps another one (the same variable again: the later clause wins).
  void declare(Attr a, uint64_t addr, uint64_t size, ckpt::Reduction red = {});
  void set_default_none() { next_default_none_ = true; }
  // cape_set_ckpt_model(), cape_set_order(): throw UserError for values out of range.
  void set_model(uint64_t model);
  void set_order(int64_t order);
  CkptModel model() const { return model_; }

  // start() of region `region`: the clause calls since the last start() become its table,
  // with the threadprivate variables no clause names (copyin makes one travel for one
  // region). Reduction variables keep their original and get the operator's identity;
  // private copies keep their value, to be restored at stop().
  void begin(uint64_t region, const Tracee& t);
  // stop() of region `region`: private copies end with the region; the original variable
  // keeps the value it had (OpenMP), on every node, so all nodes hold the same memory again.
  void end(uint64_t region, const Tracee& t);

  const std::vector<Var>& vars() const { return vars_; }
  bool empty() const { return vars_.empty() && !default_none_; }  // no clause at all
  // Does the table belong to the region of a checkpoint with this timestamp?
  bool applies_to(uint64_t timestamp) const {
    return region_ != 0 && region_of_timestamp(timestamp) == region_;
  }

  IntervalSet ranges(bool (*pred)(Attr)) const;
  // What is private in the region: private/firstprivate/threadprivate/copyin, and under
  // default(none) everything but the registered shared data and dynamic memory (of the
  // tracked set now, with the stack from `boundary` up).
  IntervalSet private_ranges(const AddressSpace& as, uint64_t boundary) const;
  IntervalSet registered() const;  // the registered variables that are not region-private
  IntervalSet threadprivate_ranges() const;  // every node's own copies, program-wide
  // TICKPT compares only shared data (002 Sect. 4.3): the pages of the registered shared
  // and copyprivate variables and dynamic memory.
  IntervalSet tickpt_cover(const std::vector<Area>& areas) const;
  // What a checkpoint made on this node keeps of the memory written (`now`: the tracked set
  // now): TICKPT the shared data, DICKPT every write, minus the values saved whole
  // (saved_values) and, under TICKPT, private data.
  IntervalSet travels(const std::vector<Area>& now, bool master) const;
  // The values saved whatever changed (002 Sect. 4.3), read from the program: reductions
  // with their operator, lastprivate with a timestamp that orders the nodes' shares (the
  // order, or the rank), and on the master its copyin variables (so "before" carries them).
  ckpt::Checkpoint saved_values(const Tracee& t, uint64_t timestamp, int rank) const;
  // The reduction variable a reduction run of this region's checkpoint belongs to (with
  // its original value), or nullptr.
  const Var* reduction_var(const ckpt::Run& r) const;

 private:
  std::vector<Var> next_vars_;      // clause calls since the last start()
  bool next_default_none_ = false;
  std::vector<Var> threadprivate_;  // program-wide (Fig. 6)
  std::vector<Var> vars_;           // the region's table: from its start() to the next start()
  bool default_none_ = false;
  uint64_t region_ = 0;             // the region vars_ belongs to (0 = none yet)
  CkptModel model_ = CkptModel::dickpt;
  int64_t order_ = -1;              // cape_set_order(); -1 = this node's rank
};

}  // namespace cape::monitor
