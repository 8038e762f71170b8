#include "monitor/determinism.h"


#include <algorithm>
#include <cstring>
#include <memory>

#include "ckpt/checkpoint.h"
#include "ckpt/hash.h"
#include "monitor/pagemap.h"
#include "util/error.h"

namespace cape::monitor {

namespace {

constexpr size_t kChunks = 64;            // hashes per area at most
constexpr size_t kReadPiece = 1 << 20;    // bytes read at a time

void put64(std::vector<uint8_t>& out, uint64_t v) {
  uint8_t b[8];
  std::memcpy(b, &v, 8);
  out.insert(out.end(), b, b + 8);
}

struct Reader {
  std::span<const uint8_t> in;
  size_t at = 0;
  uint64_t u64() {
    if (in.size() - at < 8) throw UserError("a malformed memory digest from another node");
    uint64_t v;
    std::memcpy(&v, in.data() + at, 8);
    at += 8;
    return v;
  }
};

std::string where_is(const StateDigest::Part& p) {
  switch (p.kind) {
    case Area::data: return "the executable's data";
    case Area::bss: return "the executable's .bss";
    case Area::heap: return "the brk heap";
    case Area::stack: return "the stack";
    case Area::anon: return "anonymous memory (the heap: malloc, mmap)";
  }
  return "memory";
}

// [s, s + out.size()) from the copies where they hold it, else from the program (zeros where
// it is unmapped meanwhile).
void read_piece(const Tracee& t, uint64_t s, std::span<uint8_t> out, const CopySource* copies) {
  for (size_t off = 0; off < out.size();) {
    CopyPiece c = copies ? (*copies)(s + off, out.size() - off) : CopyPiece{nullptr, out.size() - off, false};
    uint64_t k = std::min<uint64_t>(std::max<uint64_t>(c.n, 1), out.size() - off);
    std::span<uint8_t> part = out.subspan(off, k);
    if (c.zeros) {
      std::memset(part.data(), 0, k);
    } else if (c.bytes) {
      std::memcpy(part.data(), c.bytes, k);
    } else {
      size_t got = t.read_bytes_fallible(s + off, part);
      std::fill(part.begin() + static_cast<std::ptrdiff_t>(got), part.end(), uint8_t{0});  // unmapped meanwhile
    }
    off += k;
  }
}

}  // namespace

StateDigest digest_state(const Tracee& t, const std::vector<Area>& tracked, const IntervalSet& zeroed,
                         const StateDigest* before, const IntervalSet* dirty, const CopySource* copies) {
  // The same memory may be cut into mappings differently on two nodes (a range mapped in
  // two steps here, in one there): neighbours of one kind are one part.
  // (Sized ahead here and below: a digest is made, sent and decoded at every region, and its
  // vectors grown push by push were ~100 allocations per region on 3 nodes; issue 14.)
  std::vector<Area> joined;
  joined.reserve(tracked.size());
  for (const Area& a : tracked) {
    // (A piece of .bss split off by a userfaultfd registration, --sync lazy's, reads as
    // anonymous memory: .bss and anonymous neighbours are one part too. So are .bss and the
    // brk heap: the kernel grows the heap into the .bss's mapping where their flags agree,
    // and lazy's registrations, which differ from node to node, decide that: the whole
    // mapping is then "[heap]" on one node, .bss and "[heap]" on another.)
    auto anonymous = [](Area::Kind k) { return k == Area::bss || k == Area::anon || k == Area::heap; };
    if (!joined.empty() && joined.back().end == a.start &&
        (joined.back().kind == a.kind || (anonymous(joined.back().kind) && anonymous(a.kind))))
      joined.back().end = a.end;
    else
      joined.push_back(a);
  }
  StateDigest d;
  d.parts.reserve(joined.size());
  // Reused, never zeroed: a fresh 1 MiB vector at every region's begin cost its zeroing and
  // 256 page faults (issue 14).
  static thread_local std::unique_ptr<uint8_t[]> buffer(new uint8_t[kReadPiece]);
  uint8_t* const buf = buffer.get();
  static const std::vector<uint8_t> zeros(kReadPiece, 0);
  // Only pages that hold data are read: most of a big .bss or heap is often never touched
  // (zeros on every node), and reading it would cost as much as copying it.
  std::vector<std::pair<uint64_t, uint64_t>> populated;
  size_t prev_at = 0;
  for (const Area& a : joined) {
    StateDigest::Part p;
    p.start = a.start;
    p.end = a.end;
    p.kind = a.kind;
    uint64_t size = a.size();
    p.chunk = std::max<uint64_t>(kPageSize, (size + kChunks - 1) / kChunks);
    p.chunk = (p.chunk + kPageSize - 1) & ~(kPageSize - 1);
    // The same part in the previous digest (parts are in address order).
    const StateDigest::Part* old = nullptr;
    if (before && dirty) {
      while (prev_at < before->parts.size() && before->parts[prev_at].end <= a.start) ++prev_at;
      if (prev_at < before->parts.size()) {
        const StateDigest::Part& q = before->parts[prev_at];
        if (q.start == p.start && q.end == p.end && q.kind == p.kind && q.chunk == p.chunk) old = &q;
      }
    }
    if (old && !dirty->overlaps(a.start, a.end)) {
      p.hashes = old->hashes;  // nothing in it may have changed: not even the pagemap read
      d.parts.push_back(std::move(p));
      continue;
    }
    int pagemap = t.pagemap_fd();  // the image's, kept open
    if (pagemap < 0 || !populated_ranges(pagemap, page_down(a.start), a.end, populated))
      populated = {{a.start, a.end}};
    // What counts as zeros is not read at all (--sync lazy: a page not fetched yet would be).
    if (!zeroed.empty()) {
      IntervalSet keep = IntervalSet::of(std::move(populated)).minus(zeroed);
      populated.assign(keep.begin(), keep.end());
    }
    auto next = populated.begin();
    p.hashes.reserve((size + p.chunk - 1) / p.chunk);
    for (uint64_t c = a.start; c < a.end; c += p.chunk) {
      uint64_t ce = std::min(a.end, c + p.chunk);
      size_t i = static_cast<size_t>((c - a.start) / p.chunk);
      if (old && i < old->hashes.size() && !dirty->overlaps(c, ce)) {
        p.hashes.push_back(old->hashes[i]);
        continue;
      }
      // What is hashed is the memory's content, with each run of whole zero pages (by address)
      // as a short record instead of its bytes: pages not populated or counted as zeros
      // are not hashed byte by byte (--sync lazy: every page others changed is dropped and
      // zeroed here, ~1 ms of hashing zeros per region on a 64 MB grid), and a page read
      // that holds only zeros gives the same record, so nodes that hold the same bytes
      // agree whatever is populated where.
      ckpt::Hasher h;
      uint64_t zero_run = 0;  // bytes of whole zero pages not hashed yet
      auto flush = [&] {
        if (!zero_run) return;
        const uint64_t rec[2] = {0x5345474150304f52 /* "RO0PAGES" */, zero_run};
        h.update(rec, sizeof rec);
        zero_run = 0;
      };
      auto bytes = [&](const uint8_t* b, uint64_t n) {
        if (!n) return;
        flush();
        h.update(b, n);
      };
      // [s, s + n) holds `b` (or zeros): whole pages that are zeros join the run.
      auto content = [&](uint64_t s, uint64_t n, const uint8_t* b) {
        uint64_t lo = std::min(page_up(s), s + n), hi = std::max(lo, page_down(s + n));
        bytes(b ? b : zeros.data(), lo - s);
        if (!b) {
          zero_run += hi - lo;
        } else {
          for (uint64_t pg = lo; pg < hi; pg += kPageSize) {
            const uint8_t* x = b + (pg - s);
            if (std::memcmp(x, zeros.data(), kPageSize) == 0)
              zero_run += kPageSize;
            else
              bytes(x, kPageSize);
          }
        }
        bytes(b ? b + (hi - s) : zeros.data(), s + n - hi);
      };
      for (uint64_t s = c; s < ce;) {
        while (next != populated.end() && next->second <= s) ++next;
        bool data = next != populated.end() && next->first <= s;
        uint64_t e = std::min(ce, data ? next->second : (next != populated.end() ? next->first : ce));
        // (Pieces end on page boundaries, but where the chunk ends: a page is never cut in
        // two where another node, populated otherwise, would see it whole.)
        uint64_t lim = s + kReadPiece;
        if (lim < e && page_down(lim) > s) lim = page_down(lim);
        size_t n = std::min(e, lim) - s;
        if (!data) {
          content(s, n, nullptr);
          s += n;
          continue;
        }
        // All of it in one copy (and nothing to zero) or zeros there: hashed where it is.
        if (copies) {
          CopyPiece c = (*copies)(s, n);
          auto z = zeroed.first_ending_after(s);
          if (c.n == n && (c.zeros || (c.bytes && (z == zeroed.end() || z->first >= s + n)))) {
            content(s, n, c.zeros ? nullptr : c.bytes);
            s += n;
            continue;
          }
        }
        read_piece(t, s, {buf, n}, copies);
        for (auto it = zeroed.first_ending_after(s); it != zeroed.end() && it->first < s + n; ++it) {
          uint64_t lo = std::max(s, it->first), hi = std::min(s + n, it->second);
          std::memset(buf + (lo - s), 0, hi - lo);
        }
        content(s, n, buf);
        s += n;
      }
      flush();
      p.hashes.push_back(h.digest());
    }
    d.parts.push_back(std::move(p));
  }
  return d;
}

std::vector<uint8_t> encode_state(const StateDigest& d) {
  std::vector<uint8_t> out;
  size_t words = 5;
  for (const StateDigest::Part& p : d.parts) words += 5 + p.hashes.size();
  out.reserve(words * 8 + d.where.size());
  put64(out, d.begin);
  put64(out, d.where.size());
  out.insert(out.end(), d.where.begin(), d.where.end());
  put64(out, d.loop);
  put64(out, d.parts.size());
  for (const StateDigest::Part& p : d.parts) {
    put64(out, p.start);
    put64(out, p.end);
    put64(out, p.chunk);
    put64(out, static_cast<uint64_t>(p.kind));
    put64(out, p.hashes.size());
    for (uint64_t h : p.hashes) put64(out, h);
  }
  return out;
}

StateDigest decode_state(std::span<const uint8_t> bytes) {
  Reader r{bytes};
  StateDigest d;
  d.begin = r.u64();
  uint64_t n = r.u64();
  if (n > bytes.size() - r.at) throw UserError("a malformed memory digest from another node");
  d.where.assign(reinterpret_cast<const char*>(bytes.data() + r.at), n);
  r.at += n;
  d.loop = r.u64();
  uint64_t parts = r.u64();
  if (parts > bytes.size() / 40) throw UserError("a malformed memory digest from another node");
  d.parts.reserve(parts);
  for (uint64_t i = 0; i < parts; ++i) {
    StateDigest::Part p;
    p.start = r.u64();
    p.end = r.u64();
    p.chunk = r.u64();
    uint64_t kind = r.u64();
    uint64_t hashes = r.u64();
    if (kind > Area::anon || hashes > kChunks || p.end < p.start)
      throw UserError("a malformed memory digest from another node");
    p.kind = static_cast<Area::Kind>(kind);
    if (hashes > (bytes.size() - r.at) / 8) throw UserError("a malformed memory digest from another node");
    p.hashes.reserve(hashes);
    for (uint64_t k = 0; k < hashes; ++k) p.hashes.push_back(r.u64());
    d.parts.push_back(std::move(p));
  }
  if (r.at != bytes.size()) throw UserError("a malformed memory digest from another node");
  return d;
}

std::string compare_states(const StateDigest& master, const StateDigest& slave, int slave_rank,
                           const ckpt::SymbolTable& symbols) {
  // As every message about a region: its number and the construct's file:line.
  std::string region = "parallel region " + std::to_string(master.begin) +
                       (master.where.empty() ? std::string() : " (" + master.where + ")");
  std::string node = "node " + std::to_string(slave_rank);
  const std::string why =
      ": the sequential part before it did not compute the same values on every node (cape runs it on every "
      "node: it must not depend on the clock, the pid, random seeds taken from them, uninitialised memory, or "
      "files that differ between nodes; README, \"What every node must agree on\")";
  if (slave.begin != master.begin || slave.where != master.where)
    return node + " reached " + (slave.where.empty() ? "another region" : slave.where) + " where the master began " +
           region + why;
  // The nodes deal themselves their shares of the loop: each must have computed the same trip
  // count and chunk size, or iterations would be run twice or not at all.
  if (slave.loop != master.loop)
    return node + " computed another trip count or chunk size than the master for the loop of " + region +
           " (its bounds or schedule are values that differ between nodes, e.g. locals computed from the clock or "
           "the pid)" + why;
  // Areas by address: the first one that differs in place, size or contents.
  size_t n = std::max(master.parts.size(), slave.parts.size());
  for (size_t i = 0; i < n; ++i) {
    if (i >= master.parts.size() || i >= slave.parts.size() || master.parts[i].start != slave.parts[i].start ||
        master.parts[i].end != slave.parts[i].end) {
      const StateDigest::Part& p = i < master.parts.size() ? master.parts[i] : slave.parts[i];
      return node + "'s memory map differs from the master's at the start of " + region + ", near " +
             ckpt::hex_address(p.start) + " (" + where_is(p) + ")" + why;
    }
    const StateDigest::Part& m = master.parts[i];
    const StateDigest::Part& s = slave.parts[i];
    for (size_t k = 0; k < m.hashes.size() && k < s.hashes.size(); ++k) {
      if (m.hashes[k] == s.hashes[k]) continue;
      uint64_t lo = m.start + k * m.chunk, hi = std::min(m.end, lo + m.chunk);
      std::string vars;
      int named = 0;
      for (uint64_t a = lo; a < hi && named < 4;) {
        const ckpt::Symbol* sym = symbols.find(a);
        if (!sym) {
          a += 8;
          continue;
        }
        vars += (named++ ? ", `" : "`") + sym->name + "`";
        a = std::max(a + 1, sym->address + std::max<uint64_t>(sym->size, 1));
      }
      return node + "'s memory differs from the master's at the start of " + region + ": in " + where_is(m) +
             " at " + ckpt::hex_address(lo) + "-" + ckpt::hex_address(hi) +
             (vars.empty() ? std::string() : " (" + vars + (named == 4 ? ", ..." : "") + ")") + why;
    }
  }
  return "";
}

}  // namespace cape::monitor
