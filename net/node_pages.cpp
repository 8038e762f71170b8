// The page service of --sync=lazy (docs/net.md, "Lazy synchronisation"; the monitor's side is
// monitor/lazy.h). The master keeps the pages a region's merge changed, as its own memory held
// them right after it injected the merged checkpoint (004_9e6a480351e099dd.txt's future work:
// the slaves' update delayed until they need it); a slave asks for pages when its program
// first touches one of them, and its connection's reader on the master answers at once, also
// while the master's monitor is busy or its program has ended. The slave's request waits for
// its answer beside the other calls (one request at a time per slave).
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

void Node::publish_pages(uint64_t first, uint64_t count, const uint8_t* bytes) {
  std::lock_guard lk(pages_mu_);
  for (uint64_t i = 0; i < count; i++) {
    std::unique_ptr<uint8_t[]>& slot = pages_[first + i * kPage];
    if (!slot) slot.reset(new uint8_t[kPage]);
    std::memcpy(slot.get(), bytes + i * kPage, kPage);
  }
}

std::vector<uint64_t> Node::fetched_pages(int rank) {
  std::lock_guard lk(pages_mu_);
  return std::exchange(fetched_[rank], {});
}

void Node::fetch_pages(uint64_t first, uint64_t count, uint8_t* out) {
  if (opt_.rank == 0) throw std::logic_error("fetch_pages on the master");
  {
    std::lock_guard lk(mu_);
    page_reply_.reset();
  }
  PayloadWriter w;
  w.u64(first);
  w.u64(count);
  ask_master(FrameType::page_request, w.buffer(), std::to_string(count) + " page(s)");
  std::unique_lock lk(mu_);
  while (!page_reply_) {
    if (failure_) throw UserError(*failure_, failure_exit_code_);
    if (stopping_) throw UserError("waiting for pages from the master: the node is shutting down");
    cv_.wait(lk);
  }
  if (page_reply_->size() != count * kPage) {
    lk.unlock();
    fail("the master answered a page request with " + std::to_string(page_reply_->size()) + " bytes, not " +
             std::to_string(count * kPage),
         true);
    throw_failure();
  }
  std::memcpy(out, page_reply_->data(), count * kPage);
  page_reply_.reset();
}

void Node::on_page_frame(Peer& p, Frame& f) {
  PayloadReader in(f.payload);
  uint64_t first = in.u64(), count = in.u64();
  bool from_master = p.rank == 0;
  bool wrong_way = (f.type == FrameType::page_data) != from_master;
  std::span<const uint8_t> rest = f.type == FrameType::page_data ? in.rest() : std::span<const uint8_t>{};
  auto malformed = [&](const std::string& why) {
    std::string msg;
    {
      std::lock_guard lk(mu_);
      msg = p.who() + " sent a malformed " + to_string(f.type) + " frame (" + why + ")";
    }
    fail(msg, true);
  };
  if (in.failed() || wrong_way || first % kPage || count == 0 || count > kMaxPagesPerRequest)
    return malformed("bad header or direction");
  if (f.type == FrameType::page_data) {
    if (rest.size() != count * kPage) return malformed("wrong length");
    {
      std::lock_guard lk(mu_);
      page_reply_.emplace(rest.begin(), rest.end());
    }
    cv_.notify_all();
    return;
  }
  // The master: the pages as published. A page nobody published was never announced to a
  // slave as changed: asking for it is a bug, said rather than answered with stale bytes.
  std::vector<uint8_t> reply(16 + count * kPage);
  std::memcpy(reply.data(), &first, 8);
  std::memcpy(reply.data() + 8, &count, 8);
  uint64_t missing = 0;
  {
    std::lock_guard lk(pages_mu_);
    std::vector<uint64_t>& asked = fetched_[p.rank];
    for (uint64_t i = 0; i < count; i++) {
      asked.push_back(first + i * kPage);
      auto it = pages_.find(first + i * kPage);
      if (it == pages_.end()) {
        missing = first + i * kPage;
        break;
      }
      std::memcpy(reply.data() + 16 + i * kPage, it->second.get(), kPage);
    }
  }
  if (missing) {
    std::string msg;
    {
      std::lock_guard lk(mu_);
      msg = p.who() + " asked for page " + ckpt::hex_address(missing) +
            ", which no region's merge changed (--sync=lazy: a cape bug; run with --sync=eager)";
    }
    fail(msg, true);
    return;
  }
  IoResult r = p.send(FrameType::page_data, {std::array<iovec, 1>{iov_of(reply.data(), reply.size())}}, opt_.timeout);
  if (r.ok()) {
    CAPE_LOG_AT(debug, "net") << "sent " << count << " page(s) from " << ckpt::hex_address(first) << " to node "
                              << p.rank;
    return;
  }
  std::string msg;
  {
    std::lock_guard lk(mu_);
    msg = "sending pages to " + p.who() + ": " + r.describe() + " " + region_of(p);
  }
  fail(msg, true);
}

}  // namespace cape::net
