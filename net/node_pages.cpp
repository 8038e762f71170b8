// The page service of --sync=lazy (docs/net.md, "Lazy synchronisation"; the monitor's side is
// monitor/lazy.h). Every node keeps copies of the pages it owns after a region (those it
// alone wrote, as its memory held them at the region's end: 004_9e6a480351e099dd.txt's
// future work, the update delayed until a node needs it); a node asks the owner of a page
// for it when its program first touches it. Requests travel on the star: a slave asks the
// master, which answers from its own copies or passes the request on to the owning slave and
// its answer back (slave to slave through the master's reader threads). Every reader answers
// at once, also while the node's monitor is busy or after its program has ended (a lazy
// slave stays until the master leaves: serve_pages_until_the_master_leaves). A page's last
// two versions are kept: a region's merge may still ask for the one before the region
// (the base of a page two nodes wrote) after the owner published the new one.
#include <array>
#include <cstring>
#include <utility>

#include "net/node.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::net {

namespace {
constexpr uint64_t kPage = 4096;
// A request for more than this is malformed (the monitor asks for up to 64 pages at once).
constexpr uint64_t kMaxPagesPerRequest = 4096;
}  // namespace

Node::PageChunk* Node::page_chunk(uint64_t page, bool make) {
  const uint64_t key = page / kPage / kPagesPerChunk;
  auto it = pages_.find(key);
  if (it == pages_.end()) {
    if (!make) return nullptr;
    it = pages_.emplace(key, std::make_unique<PageChunk>()).first;
  }
  return it->second.get();
}

std::vector<uint8_t*> Node::publish_slots(uint64_t first, uint64_t count, uint64_t version, bool in_arena) {
  std::vector<uint8_t*> out(count);
  std::lock_guard lk(pages_mu_);
  PageChunk* chunk = nullptr;
  for (uint64_t i = 0; i < count; i++) {
    const uint64_t page = first + i * kPage, at = page / kPage % kPagesPerChunk;
    if (!chunk || at == 0) chunk = page_chunk(page, true);
    PageCopies& c = chunk->pages[at];
    if (!c.bytes[0] || c.version[0] != version) {  // the newest becomes the one before
      std::swap(c.bytes[0], c.bytes[1]);
      std::swap(c.heap[0], c.heap[1]);
      c.version[1] = c.version[0];
      c.version[0] = version;
    }
    // The slot of the version two back is reused for this page; into the arena when asked.
    if (!c.bytes[0] || (in_arena && c.heap[0] && arena_take_)) {
      if (uint8_t* slot = in_arena && arena_take_ ? arena_take_() : nullptr) {
        c.heap[0].reset();
        c.bytes[0] = slot;
      } else if (!c.bytes[0]) {
        c.heap[0].reset(new uint8_t[kPage]);
        c.bytes[0] = c.heap[0].get();
      }
    }
    out[i] = c.bytes[0];
  }
  return out;
}

void Node::set_page_arena(std::function<uint8_t*()> take) {
  std::lock_guard lk(pages_mu_);
  arena_take_ = std::move(take);
}

void Node::publish_pages(uint64_t first, uint64_t count, const uint8_t* bytes, uint64_t version) {
  std::vector<uint8_t*> slots = publish_slots(first, count, version);
  for (uint64_t i = 0; i < count; i++) std::memcpy(slots[i], bytes + i * kPage, kPage);
}

void Node::begin_publishing() {
  std::lock_guard lk(pages_mu_);
  publishing_ = true;
}

void Node::end_publishing(bool complete) {
  {
    std::lock_guard lk(pages_mu_);
    publishing_ = false;
    if (!complete) pages_torn_ = true;
  }
  pages_cv_.notify_all();
}

bool Node::read_published(uint64_t page, uint8_t* out) {
  std::lock_guard lk(pages_mu_);
  PageChunk* chunk = page_chunk(page, false);
  const PageCopies* c = chunk ? &chunk->pages[page / kPage % kPagesPerChunk] : nullptr;
  if (!c || !c->bytes[0]) return false;
  if (out) std::memcpy(out, c->bytes[0], kPage);
  return true;
}

void Node::note_asked(int rank, uint64_t first, uint64_t count) {
  std::vector<uint64_t>& asked = fetched_[rank];
  read_by_[rank].note(first, count, [&](uint64_t page) { asked.push_back(page); });
}

std::vector<uint64_t> Node::fetched_pages(int rank) {
  std::lock_guard lk(pages_mu_);
  return std::exchange(fetched_[rank], {});
}

void Node::fetch_pages(uint64_t first, uint64_t count, uint8_t* out, int owner, uint64_t version) {
  if (owner == opt_.rank || owner < 0 || owner >= opt_.size)
    throw std::logic_error("fetch_pages from node " + std::to_string(owner) + " on node " + std::to_string(opt_.rank));
  {
    std::lock_guard lk(mu_);
    page_reply_.reset();
  }
  PayloadWriter w;
  w.u64(first);
  w.u64(count);
  w.u64(opt_.rank == 0 ? 0 : static_cast<uint64_t>(owner));  // the master: "for me"; a slave: "from whom"
  w.u64(version);
  std::string what = std::to_string(count) + " page(s) from node " + std::to_string(owner);
  if (opt_.rank != 0) {
    ask_master(FrameType::page_request, w.buffer(), what);
  } else {
    Peer& p = *peers_[owner];
    IoResult r = p.send(FrameType::page_request, {std::array<iovec, 1>{iov_of(w.buffer().data(), w.buffer().size())}},
                        opt_.timeout);
    if (!r.ok()) {
      std::string msg;
      {
        std::lock_guard lk(mu_);
        msg = "asking " + p.who() + " for " + what + ": " + r.describe();
      }
      fail(msg, true);
      throw_failure();
    }
  }
  std::unique_lock lk(mu_);
  while (!page_reply_) {
    if (failure_) throw UserError(*failure_, failure_exit_code_);
    if (stopping_) throw UserError("waiting for pages from node " + std::to_string(owner) + ": the node is shutting down");
    read_while_waiting(lk, {peers_[opt_.rank == 0 ? owner : 0].get()});  // the answer comes from there
  }
  if (page_reply_->size() != count * kPage) {
    lk.unlock();
    fail("node " + std::to_string(owner) + " answered a page request with " + std::to_string(page_reply_->size()) +
             " bytes, not " + std::to_string(count * kPage),
         true);
    throw_failure();
  }
  std::memcpy(out, page_reply_->data(), count * kPage);
  page_reply_.reset();
}

void Node::serve_pages_until_the_master_leaves() {
  if (opt_.rank == 0) return;
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return failure_ || stopping_ || !peers_[0] || peers_[0]->closed; });
}

// Sends `payload` to `to`; a failed send fails the job.
void Node::send_page_frame(Peer& to, FrameType type, const std::vector<uint8_t>& payload) {
  IoResult r = to.send(type, {std::array<iovec, 1>{iov_of(payload.data(), payload.size())}}, opt_.timeout);
  if (r.ok()) return;
  std::string msg;
  {
    std::lock_guard lk(mu_);
    msg = "sending " + std::string(to_string(type)) + " to " + to.who() + ": " + r.describe() + " " + region_of(to);
  }
  fail(msg, true);
}

void Node::on_page_frame(Peer& p, Frame& f) {
  PayloadReader in(f.payload);
  uint64_t first = in.u64(), count = in.u64(), who = in.u64();
  uint64_t version = f.type == FrameType::page_request ? in.u64() : 0;
  const bool master = opt_.rank == 0;
  std::span<const uint8_t> rest = f.type == FrameType::page_data ? in.rest() : std::span<const uint8_t>{};
  auto malformed = [&](const std::string& why) {
    std::string msg;
    {
      std::lock_guard lk(mu_);
      msg = p.who() + " sent a malformed " + to_string(f.type) + " frame (" + why + ")";
    }
    fail(msg, true);
  };
  if (in.failed() || first % kPage || count == 0 || count > kMaxPagesPerRequest ||
      who >= static_cast<uint64_t>(opt_.size) || (!master && who == static_cast<uint64_t>(opt_.rank)))
    return malformed("bad header");
  if (f.type == FrameType::page_data) {
    if (rest.size() != count * kPage) return malformed("wrong length");
    if (master && who != 0) {  // a slave's answer to another slave's request: passed on
      if (who == static_cast<uint64_t>(p.rank)) return malformed("an answer to itself");
      std::vector<uint8_t> fwd(f.payload.begin(), f.payload.end());
      std::memcpy(fwd.data() + 16, &p.rank, 4);
      std::memset(fwd.data() + 20, 0, 4);
      send_page_frame(*peers_[who], FrameType::page_data, fwd);
      return;
    }
    {
      std::lock_guard lk(mu_);
      page_reply_.emplace(rest.begin(), rest.end());
    }
    wake_waiters();
    return;
  }
  // A request. The master passes one for a slave's pages on to that slave, "for" the asker.
  if (master && who != 0) {
    if (who == static_cast<uint64_t>(p.rank)) return malformed("a request for its own pages");
    {
      std::lock_guard lk(pages_mu_);  // what the asker reads (fetched_pages)
      note_asked(p.rank, first, count);
    }
    PayloadWriter w;
    w.u64(first);
    w.u64(count);
    w.u64(static_cast<uint64_t>(p.rank));
    w.u64(version);
    send_page_frame(*peers_[who], FrameType::page_request, w.buffer());
    return;
  }
  // Ours to answer (a slave answers only the master: `who` says for whom).
  if (!master && p.rank != 0) return malformed("not from the master");
  std::vector<uint8_t> reply(24 + count * kPage);
  uint64_t for_whom = master ? static_cast<uint64_t>(opt_.rank) : who;
  std::memcpy(reply.data(), &first, 8);
  std::memcpy(reply.data() + 8, &count, 8);
  std::memcpy(reply.data() + 16, &for_whom, 8);
  uint64_t missing = 0;
  bool torn = false;
  {
    std::unique_lock lk(pages_mu_);
    pages_cv_.wait(lk, [&] { return !publishing_; });  // the copies are being filled
    if (pages_torn_) missing = first, torn = true;  // never a page half copied
    if (master && !pages_torn_) note_asked(p.rank, first, count);
    for (uint64_t i = 0; i < count && !missing; i++) {
      uint64_t page = first + i * kPage;
      PageChunk* chunk = page_chunk(page, false);
      const PageCopies* c = chunk ? &chunk->pages[page / kPage % kPagesPerChunk] : nullptr;
      const uint8_t* bytes = nullptr;
      if (c)
        for (int k = 0; k < 2 && !bytes; k++)
          if (c->bytes[k] && c->version[k] <= version) bytes = c->bytes[k];
      if (!bytes) {
        missing = page;
        break;
      }
      std::memcpy(reply.data() + 24 + i * kPage, bytes, kPage);
    }
  }
  if (missing) {
    std::string msg;
    {
      std::lock_guard lk(mu_);
      msg = p.who() + " asked node " + std::to_string(opt_.rank) + " for page " + ckpt::hex_address(missing) +
            " (version " + std::to_string(version) + "), which it does not hold" +
            (torn ? std::string(" whole (its program died while it copied its pages)")
                  : std::string(" (--sync=lazy: a cape bug; run with --sync=eager)"));
    }
    fail(msg, true);
    return;
  }
  send_page_frame(p, FrameType::page_data, reply);
  CAPE_LOG_AT(debug, "net") << "sent " << count << " page(s) from " << ckpt::hex_address(first) << " for node "
                            << for_whom;
}

}  // namespace cape::net
