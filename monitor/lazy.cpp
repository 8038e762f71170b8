// --sync=lazy; see lazy.h (docs/monitor.md, "Lazy synchronisation").
#include "monitor/lazy.h"

#include <fcntl.h>
#include <signal.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "ckpt/ops.h"
#include "monitor/publish_arena.h"
#include "monitor/remote_syscall.h"
#include "protocol.h"
#include "util/env.h"
#include "util/error.h"
#include "util/log.h"
#include "util/text.h"

namespace cape::monitor {

namespace {
constexpr uint64_t kPage = 4096;

// The CPUs this process may use, read before the supervisor pins anything (a static
// initialiser: launch() pins the monitor's threads to one CPU later).
const cpu_set_t kStartCpus = [] {
  cpu_set_t s;
  if (::sched_getaffinity(0, sizeof s, &s) != 0) CPU_ZERO(&s);
  return s;
}();

// CAPE_LAZY_COPY_FLOAT: 1, the program's publishing copy may run on any CPU; 0 (default: no
// gain measured under the load of session 14, docs/monitor.md) on its node's call CPU, as
// before. Anything else: a UserError naming the variable.
bool copy_float_from_env() {
  return util::env_on_off("CAPE_LAZY_COPY_FLOAT", false, "the program's publishing copy runs on any CPU",
                          "on its node's CPU");
}

// With more nodes than CPUs (CPU placement "calls", monitor.h), a runtime call's stops keep the
// program on its monitor's CPU, chosen by rank: on 2 vCPUs ranks 0 and 2 share vCPU 0, and the
// master's publishing copy (~2,600 pages of Jacobi 2000, in `broadcast`) and slave 2's (in its
// `send`) ran there together while slave 1 sat idle on vCPU 1 waiting for the next list. For
// the copy (milliseconds; one cross-vCPU wakeup at its end, ~0.1 ms) the program's thread
// gets every CPU the process started with, and its call CPU back when the gadget has trapped
// (a stopped thread changes mask without a migration). Does nothing when the thread already
// floats or the node has a CPU of its own.
constexpr uint64_t kFloatMinPages = 512;  // 2 MiB, a copy of ~0.3 ms or more: worth a cross-vCPU wakeup
class FloatForCopy {
 public:
  FloatForCopy(pid_t tid, int nodes) : tid_(tid) {
    static const bool on = copy_float_from_env();
    if (!on || CPU_COUNT(&kStartCpus) < 2 || nodes <= CPU_COUNT(&kStartCpus)) return;
    if (::sched_getaffinity(tid_, sizeof pinned_, &pinned_) != 0 || CPU_COUNT(&pinned_) != 1) return;
    moved_ = ::sched_setaffinity(tid_, sizeof kStartCpus, &kStartCpus) == 0;
    CAPE_LOG_AT(debug, "monitor") << "--sync=lazy: the publishing copy may run on " << CPU_COUNT(&kStartCpus)
                                  << " CPUs" << (moved_ ? "" : " (sched_setaffinity failed)");
  }
  ~FloatForCopy() {
    if (moved_) ::sched_setaffinity(tid_, sizeof pinned_, &pinned_);
  }
  FloatForCopy(const FloatForCopy&) = delete;
  FloatForCopy& operator=(const FloatForCopy&) = delete;

 private:
  pid_t tid_;
  cpu_set_t pinned_;
  bool moved_ = false;
};
constexpr uint64_t kMaxAhead = 64;  // pages per fetch, at most
constexpr uint64_t kSparseBytes = 1024;  // a page the merge changed this little travels eagerly (broadcast())
// The page list rides in the checkpoint as a run at address 0 (no program memory is there):
// this magic, the number n of this slave's [start, end) pairs, them, then the pairs of every
// page the merge published (for the determinism check).
constexpr uint64_t kListMagic = 0x595a414c45504143;  // "CAPELAZY"
// A slave's part carries the pages it kept the same way: this magic, its version, then
// [start, end) pairs.
constexpr uint64_t kPartMagic = 0x5045454b45504143;  // "CAPEKEEP"

// Runs forced into every checkpoint whatever changed: a reduction's partial result (the
// merged value differs from every node's), a lastprivate value (timestamp above the region's).
bool forced(const ckpt::Run& r) { return r.reduction.active() || (r.timestamp & ((uint64_t{1} << 20) - 1)) != 0; }

// Where a page may be fetched later: anonymous memory (.bss, the heaps, anonymous maps),
// which userfaultfd's missing mode serves. The stack (each node's frames differ below the
// shared words) and file-backed .data travel eagerly.
IntervalSet lazy_areas(const std::vector<Area>& areas) {
  std::vector<IntervalSet::Interval> ok;
  for (const Area& a : areas)
    if (a.kind == Area::bss || a.kind == Area::heap || a.kind == Area::anon)
      ok.emplace_back(page_up(a.start), page_down(a.end));
  return IntervalSet::of(std::move(ok));
}

bool may_be_lazy(uint64_t p, const IntervalSet& lazy_ok, const IntervalSet& keep_eager) {
  return lazy_ok.contains(p) && lazy_ok.contains(p + kPage - 1) && !keep_eager.overlaps(p, p + kPage);
}

// Sorted pages as [start, end) pairs.
std::vector<IntervalSet::Interval> ranges_of(const std::vector<uint64_t>& pages) {
  std::vector<IntervalSet::Interval> r;
  for (uint64_t p : pages)
    if (!r.empty() && r.back().second == p)
      r.back().second = p + kPage;
    else
      r.emplace_back(p, p + kPage);
  return r;
}

// `src`'s runs cut to the pages `keep` says travel.
template <class Keep>
void append_pages(ckpt::Checkpoint& out, const ckpt::Checkpoint& src, Keep&& keep) {
  for (const ckpt::Run& r : src.runs)
    for (uint64_t p = page_down(r.address); p < r.end();) {
      if (!keep(p)) {
        p += kPage;
        continue;
      }
      uint64_t q = p + kPage;
      while (q < r.end() && keep(q)) q += kPage;
      out.append_from(src, r, std::max(p, r.address), std::min(q, r.end()));
      p = q;
    }
}
}  // namespace

LazySync::~LazySync() { reset(); }

void LazySync::reset() {
  stop_ = true;
  if (handler_.joinable()) handler_.join();
  stop_ = false;
  std::lock_guard lk(mu_);
  uffd_.reset();
  invalid_ = registered_ = {};
  registered_at_ = {};
  source_.clear();
  refreshed_.clear();
  lists_.clear();
  // After an exec the program no longer maps the arena (the page service keeps its slots):
  // the monitor copies from then on (arena_tried_ stays).
  arena_.reset();
}

// CAPE_LAZY_OUTGOING_RANGES: 1 (default) a slave's part sorts its pages by ranges; 0 page by
// page, as before session 14 (the same pages kept and sent; for A/B runs).
static bool outgoing_by_ranges() {
  static const bool on =
      util::env_on_off("CAPE_LAZY_OUTGOING_RANGES", true, "a slave's part is sorted by page ranges", "page by page");
  return on;
}

void check_lazy_env() {
  (void)program_copy_min_from_env();
  (void)outgoing_by_ranges();
  (void)copy_float_from_env();
  (void)util::ProvenReads::on();
  (void)slave_nice_from_env();
  (void)slave_cpus_from_env();
}

bool slave_cpus_from_env() {
  return util::env_on_off("CAPE_LAZY_SLAVE_CPUS", false, "the slaves' runtime calls off the master's CPU",
                          "each node's by rank");
}

int slave_nice_from_env() {
  const char* e = std::getenv("CAPE_LAZY_SLAVE_NICE");
  if (!e) return kSlaveNice;
  std::string v(e);
  bool digits = !v.empty() && v.size() <= 2 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoi(v) > 19)
    throw UserError("CAPE_LAZY_SLAVE_NICE='" + util::printable(v) +
                    "': give 0 (slaves' programs at the master's priority) or 1-19 (nice +N for a slave's "
                    "program when the job's nodes outnumber the CPUs)");
  return std::stoi(v);
}

uint64_t program_copy_min_from_env() {
  const char* e = std::getenv("CAPE_LAZY_PROGRAM_COPY");
  if (!e) return kProgramCopyMin;
  std::string v(e);
  char* stop = nullptr;
  errno = 0;
  unsigned long long n = v.empty() ? 0 : std::strtoull(v.c_str(), &stop, 10);
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || errno || *stop)
    throw UserError("CAPE_LAZY_PROGRAM_COPY='" + util::printable(v) +
                    "': give 0 (the monitor copies every published page) or N > 0 (the program copies a "
                    "publication of N pages or more)");
  return n;
}

// Reads the program's pages [a, b) straight into the page service's copies of `version`
// (one process_vm_readv per 1024 pages, no buffer in between); returns the page count.
uint64_t LazySync::read_into_slots(const StoppedThread& st, uint64_t a, uint64_t b, uint64_t version) {
  for (uint64_t p = a; p < b;) {
    uint64_t n = std::min<uint64_t>((b - p) / kPage, 1024);
    std::vector<uint8_t*> slots = ex_.publish_slots(p, n, version);
    std::vector<iovec> local(n);
    for (uint64_t i = 0; i < n; i++) local[i] = {slots[i], kPage};
    iovec remote{reinterpret_cast<void*>(p), n * kPage};
    ssize_t got = ::process_vm_readv(st.tracee.pid(), local.data(), n, &remote, 1, 0);
    if (got != static_cast<ssize_t>(n * kPage)) {
      // A short read (a page missing here is a bug: this node wrote it): the slow way, which says why.
      std::vector<uint8_t> bytes(n * kPage);
      st.tracee.read_bytes(p, bytes);
      for (uint64_t i = 0; i < n; i++) std::memcpy(slots[i], bytes.data() + i * kPage, kPage);
    }
    p += n * kPage;
  }
  return (b - a) / kPage;
}

uint64_t LazySync::arena_slots() const { return arena_ ? arena_->slots_used() : 0; }

bool LazySync::program_copies(const StoppedThread& st) {
  if (arena_ || arena_tried_) return arena_ != nullptr;
  arena_tried_ = true;
  std::string why;
  arena_ = PublishArena::map(st, &why);
  if (!arena_) {
    CAPE_LOG_AT(info, "monitor") << "--sync=lazy: the monitor copies the published pages (" << why << ")";
    return false;
  }
  ex_.set_page_arena([a = arena_] { return a->take_slot(); });
  return true;
}

uint64_t LazySync::publish(const StoppedThread& st, std::initializer_list<Publication> what) {
  uint64_t total = 0;
  for (const Publication& w : what)
    for (auto [a, b] : w.ranges) total += (b - a) / kPage;
  // One remote call per publication (two ptrace stops): worth it from a few dozen pages on.
  if (program_copy_min_ == 0 || total < program_copy_min_ || !program_copies(st)) {
    for (const Publication& w : what)
      for (auto [a, b] : w.ranges) read_into_slots(st, a, b, w.version);
    return total;
  }
  // {slot in the program, page, length} triples; neighbours in both merged into one run.
  uint64_t* list = arena_->list();
  const size_t room = PublishArena::list_triples();
  size_t n = 0;
  std::unique_ptr<AutoRemoteSyscalls> remote;
  auto run = [&] {
    if (n == 0) return;
    list[3 * n] = list[3 * n + 1] = list[3 * n + 2] = 0;
    if (!remote) remote = std::make_unique<AutoRemoteSyscalls>(st.tracee.pid(), st.tid, st.gadget);
    FloatForCopy anywhere(st.tid, total >= kFloatMinPages ? size_ : 0);
    remote->call(st.gadget + CAPE_PUBLISH_GADGET_OFFSET, st.gadget + CAPE_PUBLISH_TRAP_OFFSET + 1,
                 [&](user_regs_struct& r) { r.rdx = arena_->in_program(reinterpret_cast<uint8_t*>(list)); },
                 /*changes_maps=*/false);  // rep movsb: no system call
    ++stats_.program_copies;
    n = 0;
  };
  std::optional<std::string> failed;
  try {
    for (const Publication& w : what)
      for (auto [a, b] : w.ranges)
        for (uint64_t p = a; p < b;) {
          uint64_t count = std::min<uint64_t>((b - p) / kPage, 1024);
          std::vector<uint8_t*> slots = ex_.publish_slots(p, count, w.version, /*in_arena=*/true);
          for (uint64_t i = 0; i < count; i++) {
            uint64_t page = p + i * kPage;
            if (!arena_->owns(slots[i])) {  // the arena is full: a heap copy, read here
              st.tracee.read_bytes(page, {slots[i], kPage});
              continue;
            }
            uint64_t dst = arena_->in_program(slots[i]);
            if (n > 0 && list[3 * n - 3] + list[3 * n - 1] == dst && list[3 * n - 2] + list[3 * n - 1] == page) {
              list[3 * n - 1] += kPage;
              continue;
            }
            if (n == room) run();
            list[3 * n] = dst, list[3 * n + 1] = page, list[3 * n + 2] = kPage;
            ++n;
          }
          p += count * kPage;
        }
    run();
  } catch (const TraceeDied&) {
    throw;  // (the requests that wait for these copies are refused: Exchange::end_publishing)
  } catch (const std::exception& e) {
    failed = e.what();
  }
  if (remote) remote->restore();  // (throws when it cannot: the job fails)
  if (failed) {
    // The gadget faulted (a page the program cannot read: the monitor can, through
    // /proc/PID/mem). The same slots again, read here; no program copies from now on.
    CAPE_LOG_AT(warn, "monitor") << "--sync=lazy: the program's publishing copy failed (" << *failed
                                 << "); the monitor copies the published pages from now on";
    arena_.reset();
    for (const Publication& w : what)
      for (auto [a, b] : w.ranges) read_into_slots(st, a, b, w.version);
    return total;
  }
  stats_.program_copied += total;
  return total;
}

// ---- slave: its part ----

IntervalSet LazySync::undiffed(const std::vector<Area>& areas, const IntervalSet& not_these) const {
  std::vector<IntervalSet::Interval> ok;
  for (auto [a, b] : lazy_areas(areas)) {
    auto it = kept_before_.first_ending_after(a);
    for (; it != kept_before_.end() && it->first < b; ++it) ok.emplace_back(std::max(a, it->first), std::min(b, it->second));
  }
  return IntervalSet::of(std::move(ok)).minus(not_these).minus(wanted_);
}

ckpt::Checkpoint LazySync::outgoing(const ckpt::Checkpoint& part, const std::vector<Area>& areas,
                                    const IntervalSet& keep_eager, std::vector<uint64_t> undiffed) {
  const uint64_t version = ++epoch_;
  IntervalSet lazy_ok = lazy_areas(areas);
  // Memory mapped in this region travels: the master maps it at its inject.
  std::vector<IntervalSet::Interval> appeared;
  for (const ckpt::MapChange& m : part.mappings)
    if (m.what != ckpt::MapChange::What::unmapped) appeared.emplace_back(m.start, m.end);
  IntervalSet fresh = IntervalSet::of(std::move(appeared));
  std::set<uint64_t> eager, pages;
  std::unordered_map<uint64_t, uint64_t> changed;  // bytes of runs, by page
  for (const ckpt::Run& r : part.runs)
    for (uint64_t p = page_down(r.address); p < r.end(); p += kPage) {
      pages.insert(p);
      changed[p] += std::min(r.end(), p + kPage) - std::max(r.address, p);
      if (forced(r) || !may_be_lazy(p, lazy_ok, keep_eager) || fresh.overlaps(p, p + kPage)) eager.insert(p);
    }
  // A page it changed sparsely travels as its words (broadcast() says why).
  for (auto [p, bytes] : changed)
    if (bytes <= kSparseBytes) eager.insert(p);
  // Pages create() did not diff have no runs: they are kept whatever the rules below say
  // (undiffed() left out what must travel; a page another node wrote too is merged by
  // resolve()).
  // (Sorted vectors, not sets: a stencil's slave keeps ~2,600 such pages every region.)
  if (!std::is_sorted(undiffed.begin(), undiffed.end())) std::sort(undiffed.begin(), undiffed.end());
  undiffed.erase(std::unique(undiffed.begin(), undiffed.end()), undiffed.end());
  auto whole = [&](uint64_t p) { return std::binary_search(undiffed.begin(), undiffed.end(), p); };
  for (auto it = eager.begin(); it != eager.end();) it = whole(*it) ? eager.erase(it) : std::next(it);
  std::vector<uint64_t> with_runs;
  for (uint64_t p : pages)
    if (!eager.count(p)) with_runs.push_back(p);
  // The first and last page of each range travel: where the neighbouring node's share of a
  // loop begins, the page is usually written by both (a row of a grid is not a page), and
  // the master would have to fetch it back to merge it (resolve()).
  // The pages other nodes read (wanted_: a stencil's halo rows) travel too: their readers
  // get the words with the merged result instead of fetching them. (After the edges: an
  // edge computed without them would move inwards as they join, region after region.)
  std::vector<IntervalSet::Interval> kept;
  if (outgoing_by_ranges()) {
    // Whole pages are kept: only the pages with runs are looked at one by one (a stencil's
    // slave: a handful a region, against ~2,600 whole pages that the loop below walked).
    const IntervalSet whole_set = IntervalSet::of(ranges_of(undiffed));
    const IntervalSet candidates = whole_set.unite(IntervalSet::of(ranges_of(with_runs)));
    std::vector<uint64_t> keep;
    for (uint64_t p : with_runs) {
      if (whole_set.contains(p)) continue;
      auto [a, b] = *candidates.first_ending_after(p);  // the range holding p
      bool edge = b - a <= 2 * kPage || p == a || p == b - kPage;
      if (edge || wanted_.overlaps(p, p + kPage))
        eager.insert(p);
      else
        keep.push_back(p);
    }
    const IntervalSet all_kept = whole_set.unite(IntervalSet::of(ranges_of(keep)));
    kept.assign(all_kept.begin(), all_kept.end());
  } else {  // CAPE_LAZY_OUTGOING_RANGES=0: page by page, as before session 14
    std::vector<uint64_t> candidates;
    candidates.reserve(with_runs.size() + undiffed.size());
    std::set_union(with_runs.begin(), with_runs.end(), undiffed.begin(), undiffed.end(), std::back_inserter(candidates));
    std::vector<uint64_t> keep;
    for (auto [a, b] : ranges_of(candidates)) {
      for (uint64_t p = a; p < b; p += kPage) {
        bool edge = b - a <= 2 * kPage || p == a || p == b - kPage;
        if (!whole(p) && (edge || wanted_.overlaps(p, p + kPage)))
          eager.insert(p);
        else
          keep.push_back(p);
      }
    }
    kept = ranges_of(keep);
  }
  kept_before_ = kept_before_.unite(IntervalSet::of(kept));
  note_kept(IntervalSet::of(kept));
  // Their bytes as the region left them, published as this exchange's version by
  // publish_pending(), once the part is on its way.
  pending_ = {version, kept};
  std::vector<uint64_t> list{kPartMagic, version};
  for (auto [a, b] : kept) list.push_back(a), list.push_back(b);
  ckpt::Checkpoint out = part.header();
  if (!kept.empty()) out.append(0, {reinterpret_cast<const uint8_t*>(list.data()), list.size() * 8}, 0);
  append_pages(out, part, [&](uint64_t p) { return eager.count(p) != 0; });
  return out;
}

void LazySync::publish_pending(const StoppedThread& st, DirtyTracker& tracker) {
  auto [version, kept] = std::exchange(pending_, {});
  stats_.pages_kept += publish(st, {{kept, version}});
  tracker.originals_published(IntervalSet::of(kept));  // what create() skipped is here now
}

// ---- master ----

void LazySync::note_part(int from, const ckpt::Checkpoint& part) {
  for (const ckpt::Run& r : part.runs)
    for (uint64_t p = page_down(r.address); p < r.end(); p += kPage) {
      auto [it, fresh] = owner_.emplace(p, from);
      if (!fresh && it->second != from) it->second = -1;
    }
}

void LazySync::take_own(const std::vector<uint64_t>& pages) {
  if (pages.empty()) return;
  auto& [version, ranges] = kept_[0];
  version = epoch_;  // (begin_merge counted this exchange: broadcast() publishes as epoch_)
  ranges = ranges_of(pages);
  for (uint64_t p : pages) {
    auto [it, fresh] = owner_.emplace(p, 0);
    if (!fresh && it->second != 0) it->second = -1;
  }
}

void LazySync::take_part(int from, ckpt::Checkpoint& part) {
  if (!part.runs.empty() && part.runs.front().address == 0) {
    std::span<const uint8_t> d = part.data(part.runs.front());
    if (d.size() < 16 || d.size() % 16 != 0 || ckpt::load64(d.data()) != kPartMagic)
      throw UserError("--sync=lazy: node " + std::to_string(from) +
                      "'s part has a malformed page list (the nodes run different cape versions?)");
    auto& [version, ranges] = kept_[from];
    version = ckpt::load64(d.data() + 8);
    for (size_t o = 16; o < d.size(); o += 16) {
      uint64_t s = ckpt::load64(d.data() + o), e = ckpt::load64(d.data() + o + 8);
      if (s % kPage || e % kPage || e <= s)
        throw UserError("--sync=lazy: node " + std::to_string(from) + "'s part lists a page range that is not one");
      ranges.emplace_back(s, e);
      for (uint64_t p = s; p < e; p += kPage) {
        auto [it, fresh] = owner_.emplace(p, from);
        if (!fresh && it->second != from) it->second = -1;
      }
    }
    part.runs.erase(part.runs.begin());
  }
  note_part(from, part);
}

std::vector<std::pair<int, ckpt::Checkpoint>> LazySync::resolve(const std::string& name, uint64_t timestamp,
                                                                const ReadFn& read_base, const ReadFn& read_now) {
  std::vector<std::pair<int, ckpt::Checkpoint>> parts;
  std::vector<Invalidation> mine;
  std::vector<IntervalSet::Interval> all;
  for (auto& [s, vk] : kept_) {
    auto& [version, ranges] = vk;
    std::vector<uint64_t> alone, shared;
    for (auto [a, b] : ranges)
      for (uint64_t p = a; p < b; p += kPage) (owner_[p] == s ? alone : shared).push_back(p);
    std::vector<IntervalSet::Interval> owned = ranges_of(alone);
    for (auto [a, b] : owned) {
      if (s != 0) mine.push_back({a, b, {s, version}});  // (the master's own stay valid here)
      all.emplace_back(a, b);
    }
    owned_[s] = {version, std::move(owned)};
    if (shared.empty()) continue;
    // The master's own, written by a slave too: not candidates to skip any more.
    if (s == 0) kept_before_ = kept_before_.minus(IntervalSet::of(ranges_of(shared)));
    // Another node wrote these pages too: s's words are its page against the base.
    ckpt::Checkpoint diff;
    diff.timestamp = timestamp;
    {
      ckpt::Differ d(diff, timestamp);
      std::vector<uint8_t> buf, base(kPage);
      for (auto [a, b] : ranges_of(shared))
        for (uint64_t p = a; p < b;) {
          uint64_t n = std::min<uint64_t>((b - p) / kPage, kMaxAhead);
          buf.resize(n * kPage);
          if (s == 0) {
            read_now(p, buf);  // the master's own page, here (never invalid: it kept it)
          } else {
            std::lock_guard lk(mu_);  // one request at a time (the handler's too)
            ex_.fetch_pages(p, n, buf.data(), s, version);
          }
          for (uint64_t i = 0; i < n; i++) {
            read_base(p + i * kPage, base);  // (may fault an invalid page in: mu_ not held)
            d.add(p + i * kPage, base, {buf.data() + i * kPage, kPage});
          }
          (s == 0 ? stats_.own_merged : stats_.pages_resolved) += n;
          p += n * kPage;
        }
    }
    parts.emplace_back(s, std::move(diff));
  }
  ever_lazy_ = ever_lazy_.unite(IntervalSet::of(std::move(all)));
  if (!mine.empty()) lists_[name] = std::move(mine);
  return parts;
}

ckpt::Checkpoint LazySync::without_own(const ckpt::Checkpoint& merged) const {
  ckpt::Checkpoint out = merged.header();
  for (const ckpt::Run& r : merged.runs) {
    if (forced(r)) {
      out.append_from(merged, r);
      continue;
    }
    auto mine = [&](uint64_t p) {
      auto it = owner_.find(p);
      return it != owner_.end() && it->second == 0;
    };
    for (uint64_t p = page_down(r.address); p < r.end();) {
      if (mine(p)) {
        p += kPage;
        continue;
      }
      uint64_t q = p + kPage;
      while (q < r.end() && !mine(q)) q += kPage;
      out.append_from(merged, r, std::max(p, r.address), std::min(q, r.end()));
      p = q;
    }
  }
  return out;
}

void LazySync::broadcast(const StoppedThread& st, const ckpt::Checkpoint& merged, const std::vector<Area>& areas,
                         const IntervalSet& keep_eager, DirtyTracker& tracker) {
  IntervalSet lazy_ok = lazy_areas(areas);
  std::set<uint64_t> eager, pages;
  std::unordered_map<uint64_t, uint64_t> changed;  // bytes of runs, by page
  for (const ckpt::Run& r : merged.runs)
    for (uint64_t p = page_down(r.address); p < r.end(); p += kPage) {
      pages.insert(p);
      changed[p] += std::min(r.end(), p + kPage) - std::max(r.address, p);
      if (forced(r) || !may_be_lazy(p, lazy_ok, keep_eager)) eager.insert(p);
    }
  // A page the merge changed sparsely (a few words of a large block) travels as those words,
  // as under eager: a fetch (a round trip and the whole page) costs far more than a few
  // hundred bytes to each slave. (tests/contract's stress program, 20 regions, 3 nodes:
  // 7x eager's time when every such page was fetched, 3,332 fetches per slave.)
  for (auto [p, bytes] : changed)
    if (bytes <= kSparseBytes) eager.insert(p);
  // The pages that may be fetched, as the master holds them now (after its inject).
  std::vector<uint64_t> lazy;
  for (uint64_t p : pages)
    if (!eager.count(p)) lazy.push_back(p);
  std::vector<IntervalSet::Interval> published = ranges_of(lazy);
  // (Published after the lists are sent, below: the slaves go on meanwhile, and a request for
  // one of these pages waits until they are there.)
  ex_.begin_publishing();
  struct Published {
    Exchange& ex;
    int unwinding = std::uncaught_exceptions();
    ~Published() { ex.end_publishing(std::uncaught_exceptions() == unwinding); }  // (torn if the program died)
  } published_at_end{ex_};
  std::vector<uint64_t> own;  // the pages the master alone wrote: next time it keeps them
  IntervalSet owned_here;
  if (auto it = owned_.find(0); it != owned_.end()) owned_here = IntervalSet::of(it->second.second);
  for (uint64_t p : lazy)
    if (auto w = owner_.find(p); w != owner_.end() && w->second == 0) own.push_back(p);
  owned_here = owned_here.unite(IntervalSet::of(ranges_of(own)));
  kept_before_ = kept_before_.unite(owned_here);
  note_kept(std::move(owned_here));
  // Every page some node may not hold now (for the determinism check: the same on all).
  std::vector<IntervalSet::Interval> everywhere = published;
  for (auto& [s, vo] : owned_)
    for (auto iv : vo.second) everywhere.push_back(iv);
  IntervalSet all = IntervalSet::of(everywhere);
  ever_lazy_ = ever_lazy_.unite(all);
  // What some node reads: slaves send their writes there eagerly (wanted_).
  for (int s = 1; s < size_; s++)
    for (uint64_t p : ex_.fetched_pages(s)) hot_[s].insert(p);
  std::vector<uint64_t> read_pages;
  {
    std::lock_guard lk(mu_);
    read_pages.assign(hot_here_.begin(), hot_here_.end());
  }
  for (auto& [s, hot] : hot_) read_pages.insert(read_pages.end(), hot.begin(), hot.end());
  std::sort(read_pages.begin(), read_pages.end());
  read_pages.erase(std::unique(read_pages.begin(), read_pages.end()), read_pages.end());
  std::vector<IntervalSet::Interval> wanted = ranges_of(read_pages);
  wanted_ = IntervalSet::of(wanted);  // the master diffs what others read (undiffed())
  // Each slave: the eager pages' runs (with those it fetched before: what it reads, it reads
  // again), and where the pages someone else wrote are.
  auto for_slave = [&](int s) {
    std::unordered_set<uint64_t>& hot = hot_[s];
    auto travels = [&](uint64_t p) {
      if (eager.count(p)) return true;
      if (!hot.count(p)) return false;
      auto w = owner_.find(p);
      return w == owner_.end() || w->second != s;  // s's own writes are there already
    };
    std::vector<Invalidation> inv;
    auto add = [&](uint64_t a, uint64_t b, Source from) {
      if (!inv.empty() && inv.back().end == a && inv.back().from == from)
        inv.back().end = b;
      else
        inv.push_back({a, b, from});
    };
    for (uint64_t p : lazy) {
      auto it = owner_.find(p);
      if (it != owner_.end() && it->second == s) continue;  // only s wrote it: valid there
      if (hot.count(p)) continue;                            // travels below
      add(p, p + kPage, {0, epoch_});
    }
    for (auto& [o, vo] : owned_)
      if (o != s)
        for (auto [a, b] : vo.second) add(a, b, {o, vo.first});
    std::sort(inv.begin(), inv.end(), [](const Invalidation& x, const Invalidation& y) { return x.start < y.start; });
    std::vector<uint64_t> list{kListMagic, inv.size(), all.size()};
    for (const Invalidation& i : inv)
      list.insert(list.end(), {i.start, i.end, static_cast<uint64_t>(i.from.owner), i.from.version});
    for (auto [a, b] : all) list.push_back(a), list.push_back(b);
    for (auto [a, b] : wanted) list.push_back(a), list.push_back(b);
    list.push_back(0);  // (an even count of words)
    ckpt::Checkpoint out = merged.header();
    out.append(0, {reinterpret_cast<const uint8_t*>(list.data()), list.size() * 8}, 0);
    append_pages(out, merged, travels);
    return out;
  };
  // When every slave's checkpoint would be the same (nothing published that one of them
  // wrote, no slave's own pages, the same fetched pages among the published: an empty region
  // always), it is made once and broadcast (sealed once, one pass over the sockets) instead
  // of made, sealed and sent per slave (issue 14).
  if (size_ > 2 && same_for_every_slave(lazy)) {
    ckpt::Checkpoint out = for_slave(1);
    stats_.eager_bytes += out.memory_bytes() * static_cast<uint64_t>(size_ - 1);
    ++stats_.broadcasts_once;
    ex_.broadcast(out);
  } else {
    for (int s = 1; s < size_; s++) {
      ckpt::Checkpoint out = for_slave(s);
      stats_.eager_bytes += out.memory_bytes();
      ex_.send(out, s);
    }
  }
  // What the slaves may now ask for, as the master's memory holds it: the pages the merge
  // changed, and those the master kept (its create() skipped them: no runs).
  // (One publication: the program copies both at one remote call.)
  static const std::vector<IntervalSet::Interval> none;
  auto own_it = owned_.find(0);
  const std::vector<IntervalSet::Interval>& own_ranges = own_it != owned_.end() ? own_it->second.second : none;
  uint64_t own_version = own_it != owned_.end() ? own_it->second.first : epoch_;
  uint64_t own_pages = 0;
  for (auto [a, b] : own_ranges) own_pages += (b - a) / kPage;
  uint64_t all_pages = publish(st, {{published, epoch_}, {own_ranges, own_version}});
  stats_.pages_published += all_pages - own_pages;
  stats_.pages_kept += own_pages;
  if (own_it != owned_.end()) tracker.originals_published(IntervalSet::of(own_it->second.second));
  CAPE_LOG_AT(debug, "monitor") << "lazy broadcast('" << merged.name << "'): " << pages.size() << " pages changed, "
                                << eager.size() << " eager, " << lazy.size() << " published";
  owner_.clear();
}

bool LazySync::same_for_every_slave(const std::vector<uint64_t>& lazy) {
  static const bool on = !(std::getenv("CAPE_LAZY_BROADCAST_ONCE") && std::string(std::getenv("CAPE_LAZY_BROADCAST_ONCE")) == "0");
  if (!on) return false;
  for (auto& [o, vo] : owned_)  // a slave's own pages are listed to every other slave
    if (o != 0 && !vo.second.empty()) return false;
  for (uint64_t p : lazy) {
    if (auto w = owner_.find(p); w != owner_.end() && w->second != 0) return false;  // valid on its writer only
    const bool hot1 = hot_[1].count(p) != 0;  // travels to the slaves that fetched it before
    for (int s = 2; s < size_; s++)
      if ((hot_[s].count(p) != 0) != hot1) return false;
  }
  return true;
}

// ---- slave ----

void LazySync::received(const std::string& name, ckpt::Checkpoint& ck) {
  if (ck.runs.empty() || ck.runs.front().address != 0) return;
  std::span<const uint8_t> d = ck.data(ck.runs.front());
  const auto bad = [&] {
    return UserError("--sync=lazy: checkpoint '" + name + "' has a malformed page list (the nodes run different cape versions?)");
  };
  if (d.size() < 32 || d.size() % 16 != 0 || ckpt::load64(d.data()) != kListMagic) throw bad();
  uint64_t mine = ckpt::load64(d.data() + 8), all = ckpt::load64(d.data() + 16);
  if (mine > (d.size() - 32) / 32 || all > (d.size() - 32 - mine * 32) / 16) throw bad();
  std::vector<Invalidation> list;
  std::vector<IntervalSet::Interval> published, wanted;
  size_t o = 24;
  for (uint64_t i = 0; i < mine; i++, o += 32) {
    uint64_t s = ckpt::load64(d.data() + o), e = ckpt::load64(d.data() + o + 8);
    uint64_t owner = ckpt::load64(d.data() + o + 16), version = ckpt::load64(d.data() + o + 24);
    if (s % kPage || e % kPage || e <= s || owner >= static_cast<uint64_t>(size_) ||
        owner == static_cast<uint64_t>(rank_))
      throw bad();
    list.push_back({s, e, {static_cast<int>(owner), version}});
  }
  for (uint64_t i = 0; o + 16 <= d.size(); o += 16, i++) {
    uint64_t s = ckpt::load64(d.data() + o), e = ckpt::load64(d.data() + o + 8);
    if (s % kPage || e % kPage || e <= s) throw bad();
    (i < all ? published : wanted).emplace_back(s, e);
  }
  ck.runs.erase(ck.runs.begin());
  lists_[name] = std::move(list);
  wanted_ = IntervalSet::of(std::move(wanted));
  ever_lazy_ = ever_lazy_.unite(IntervalSet::of(std::move(published)));
}

LazySync::Source LazySync::source_of(uint64_t page) const {
  auto it = source_.find(page);
  return it == source_.end() ? Source{} : it->second;
}

uint64_t LazySync::same_source(uint64_t page, uint64_t end, uint64_t max) const {
  Source from = source_of(page);
  uint64_t n = 1;
  while (n < max && page + n * kPage < end && source_of(page + n * kPage) == from) n++;
  return n;
}

void LazySync::before_inject(const ckpt::Checkpoint& ck) {
  std::lock_guard lk(mu_);
  if (invalid_.empty()) return;
  for (const ckpt::Run& r : ck.runs) {
    uint64_t lo = page_down(r.address), hi = page_up(r.end());
    for (;;) {
      auto it = invalid_.first_ending_after(lo);
      if (it == invalid_.end() || it->first >= hi) break;
      uint64_t s = std::max(lo, it->first), e = std::min(hi, it->second);
      for (uint64_t p = s; p < e;) {
        uint64_t n = same_source(p, e, kMaxAhead);
        fill(p, n, false);
        p += n * kPage;
      }
      lo = e;
    }
  }
}

// Its own userfaultfd, made in the program and taken as the uffd tracker takes its (remote_syscall.h).
void LazySync::open_own_uffd(const StoppedThread& st) {
  uffd_.reset(take_userfaultfd_of(st.tracee.pid(), st.tid, st.gadget, "--sync=lazy", "run with --sync=eager"));
  uffdio_api api{};
  api.api = UFFD_API;
  if (::ioctl(uffd_.get(), UFFDIO_API, &api) != 0) fail_errno("UFFDIO_API");
}

void LazySync::register_missing(uint64_t start, uint64_t end) {
  uffdio_register reg{};
  reg.range = {start, end - start};
  reg.mode = UFFDIO_REGISTER_MODE_MISSING | (wp_ ? UFFDIO_REGISTER_MODE_WP : 0);
  maps_may_change();  // a registration splits the mappings (memory_map.h)
  if (::ioctl(uffd_.get(), UFFDIO_REGISTER, &reg) != 0)
    throw UserError(errno_message("--sync=lazy: UFFDIO_REGISTER (missing mode) of " + ckpt::hex_address(start) + "-" +
                                  ckpt::hex_address(end)) +
                    " (run with --sync=eager)");
  registered_ = registered_.unite(IntervalSet::of({{start, end}}));
}

void LazySync::after_inject(const StoppedThread& st, const std::string& name, DirtyTracker& tracker) {
  auto it = lists_.find(name);
  if (it == lists_.end()) return;
  std::vector<Invalidation> list = std::move(it->second);
  lists_.erase(it);
  if (list.empty()) return;
  if (!uffd_.valid()) {
    if (tracker.userfaultfd() >= 0) {  // uffd: its descriptor, missing mode beside write protection
      uffd_.reset(::fcntl(tracker.userfaultfd(), F_DUPFD_CLOEXEC, 0));
      if (!uffd_.valid()) fail_errno("dup of the userfaultfd");
      wp_ = true;
    } else {  // mprotect: a userfaultfd of our own, missing mode only
      open_own_uffd(st);
      wp_ = false;
    }
    pid_ = st.tracee.pid();
    handler_ = std::thread([this] { handler_loop(); });
  }
  std::lock_guard lk(mu_);
  std::vector<IntervalSet::Interval> ranges;
  for (const Invalidation& i : list) {
    ranges.emplace_back(i.start, i.end);
    for (uint64_t p = i.start; p < i.end; p += kPage)
      if (i.from == Source{})
        source_.erase(p);
      else
        source_[p] = i.from;
  }
  // Pages still invalid from an earlier list (not fetched since: a stencil's other shares,
  // every region) are dropped and registered already; if the mappings changed since, every
  // invalid page is registered again (one may have lost it).
  const IntervalSet listed = IntervalSet::of(std::move(ranges));
  const bool intact = maps_epoch(pid_) == registered_at_;
  const IntervalSet fresh = intact ? listed.minus(invalid_) : listed;
  for (auto [s, e] : intact ? fresh : invalid_.unite(listed)) register_missing(s, e);
  ranges.assign(fresh.begin(), fresh.end());
  if (!ranges.empty()) {
    AutoRemoteSyscalls remote(st.tracee.pid(), st.tid, st.gadget);
    for (auto [s, e] : ranges) {
      long r = remote.syscall(SYS_madvise, static_cast<long>(s), static_cast<long>(e - s), MADV_DONTNEED);
      if (r < 0) {
        errno = static_cast<int>(-r);
        throw UserError(errno_message("--sync=lazy: madvise(MADV_DONTNEED) of " + ckpt::hex_address(s) + "-" +
                                      ckpt::hex_address(e)) +
                        " (run with --sync=eager)");
      }
      stats_.pages_invalidated += (e - s) / kPage;
    }
    remote.restore();
  }
  invalid_ = invalid_.unite(listed);
  registered_at_ = maps_epoch(pid_);
}

void LazySync::after_start() {
  std::lock_guard lk(mu_);
  if (!uffd_.valid() || maps_epoch(pid_) == registered_at_) return;
  for (auto [s, e] : invalid_) register_missing(s, e);
  registered_at_ = maps_epoch(pid_);
}

void LazySync::at_call(DirtyTracker& tracker) {
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> done;
  {
    std::lock_guard lk(mu_);
    done.swap(refreshed_);
  }
  for (auto& [first, bytes] : done)
    for (size_t o = 0; o < bytes.size(); o += kPage) tracker.refresh_original(first + o, {bytes.data() + o, kPage});
}

void LazySync::fill(uint64_t first, uint64_t count, bool read) {
  buf_.resize(count * kPage);
  Source from = source_of(first);
  ex_.fetch_pages(first, count, buf_.data(), from.owner, from.version);
  if (rank_ == 0 && read) read_here_.note(first, count, [&](uint64_t page) { hot_here_.insert(page); });
  for (uint64_t i = 0; i < count; i++) source_.erase(first + i * kPage);
  std::vector<uint64_t> skipped;
  stats_.fetches++;
  // One UFFDIO_COPY stays inside one mapping (ENOENT otherwise): where the run crosses a
  // mapping's end (the heap grown by mprotect in a later region), page by page.
  uint64_t piece = count * kPage;
  for (uint64_t done = 0; done < count * kPage;) {
    uffdio_copy c{};
    c.dst = first + done;
    c.src = reinterpret_cast<uint64_t>(buf_.data() + done);
    c.len = std::min(piece, count * kPage - done);
    // uffd: not "written", the program's own writes are what the tracker sees. (mprotect:
    // inside a window the area is read-only; a write faults and the tracker copies this.)
    c.mode = wp_ ? UFFDIO_COPY_MODE_WP : 0;
    if (::ioctl(uffd_.get(), UFFDIO_COPY, &c) == 0) {
      done += c.len;
      continue;
    }
    if (c.copy > 0) {
      done += static_cast<uint64_t>(c.copy);
      continue;
    }
    if ((c.copy == -ENOENT || errno == ENOENT) && piece > kPage) {
      piece = kPage;
      continue;
    }
    if (c.copy == -EEXIST || errno == EEXIST) {  // present already: not ours to refresh
      skipped.push_back(first + done);
      done += kPage;
      continue;
    }
    if (c.copy == -EAGAIN || errno == EAGAIN) continue;
    fail_errno("UFFDIO_COPY of a fetched page at " + ckpt::hex_address(first + done));
  }
  invalid_ = invalid_.minus(IntervalSet::of({{first, first + count * kPage}}));
  stats_.pages_fetched += count;
  if (skipped.empty()) {
    refreshed_.emplace_back(first, buf_);
  } else {
    for (uint64_t i = 0; i < count; i++)
      if (std::find(skipped.begin(), skipped.end(), first + i * kPage) == skipped.end())
        refreshed_.emplace_back(first + i * kPage, std::vector<uint8_t>(buf_.begin() + i * kPage, buf_.begin() + (i + 1) * kPage));
  }
  next_expected_ = first + count * kPage;
}

void LazySync::serve_fault(uint64_t page) {
  std::lock_guard lk(mu_);
  auto it = invalid_.first_ending_after(page);
  if (it != invalid_.end() && it->first <= page) {
    // A sequential reader gets twice as many pages each time; a jump starts again at one.
    ahead_ = page == next_expected_ ? std::min(ahead_ * 2, kMaxAhead) : 1;
    fill(page, same_source(page, it->second, ahead_), true);
    return;
  }
  // Not invalid: memory never touched in a registered range (zeros), or fetched meanwhile.
  uffdio_zeropage z{};
  z.range = {page, kPage};
  if (::ioctl(uffd_.get(), UFFDIO_ZEROPAGE, &z) == 0) {
    stats_.zero_pages++;
    return;
  }
  if (errno != EEXIST && errno != EAGAIN) fail_errno("UFFDIO_ZEROPAGE at " + ckpt::hex_address(page));
  if (errno == EEXIST) {
    // No page, but a uffd-wp marker where one was dropped while write-protected (the
    // program's madvise(MADV_DONTNEED)): UFFDIO_ZEROPAGE refuses a marker, UFFDIO_COPY takes
    // it (without this the fault came back forever: a hang, issue 14 session 10). EEXIST
    // again: the page is here (fetched meanwhile).
    static const std::vector<uint8_t> zeros(kPage, 0);
    uffdio_copy c{};
    c.dst = page;
    c.src = reinterpret_cast<uint64_t>(zeros.data());
    c.len = kPage;
    c.mode = wp_ ? UFFDIO_COPY_MODE_WP : 0;
    if (::ioctl(uffd_.get(), UFFDIO_COPY, &c) == 0) {
      stats_.zero_pages++;
      return;
    }
  }
  uffdio_range w{page, kPage};
  ::ioctl(uffd_.get(), UFFDIO_WAKE, &w);
}

void LazySync::handler_loop() {
  try {
    while (!stop_) {
      pollfd p{uffd_.get(), POLLIN, 0};
      int n = ::poll(&p, 1, 100);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail_errno("poll on the userfaultfd");
      if (n == 0) continue;
      uffd_msg m{};
      ssize_t got = ::read(uffd_.get(), &m, sizeof m);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got != static_cast<ssize_t>(sizeof m)) fail_errno("read of the userfaultfd");
      if (m.event != UFFD_EVENT_PAGEFAULT) continue;
      serve_fault(page_down(m.arg.pagefault.address));
    }
  } catch (const std::exception& e) {
    // The job failed (the master is gone): the node ends the program; nothing to serve.
    handler_error_ = e.what();
    // The program waits for a page that will not come: end it (the node then reports its
    // end), after saying why.
    CAPE_LOG_AT(error, "monitor") << "--sync=lazy: the page fault handler stopped: " << e.what();
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }
}

}  // namespace cape::monitor
