// The publishing arena of --sync=lazy; see publish_arena.h.
#include "monitor/publish_arena.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <cstring>

#include "monitor/remote_syscall.h"
#include "protocol.h"

namespace cape::monitor {

namespace {
constexpr uint64_t kPage = 4096;
static_assert(CAPE_PUBLISH_LIST_BYTES % kPage == 0, "slots start on a page");
}  // namespace

size_t PublishArena::list_triples() { return CAPE_PUBLISH_LIST_BYTES / 24 - 1; }

PublishArena::PublishArena(std::unique_ptr<Scratch> s) : scratch_(std::move(s)) {
  slots_begin_ = scratch_->local() + CAPE_PUBLISH_LIST_BYTES;
  end_ = scratch_->local() + scratch_->size();
}

std::shared_ptr<PublishArena> PublishArena::map(const StoppedThread& t, std::string* why) {
  if (!has_gadget(t, CAPE_PUBLISH_TAG_OFFSET, CAPE_PUBLISH_TAG)) {
    *why = "the program's libcape has no publishing gadget (built before session 12)";
    return nullptr;
  }
  // Not populated: the memfd's pages come as slots are first used (64 GiB is address space).
  std::unique_ptr<Scratch> s = Scratch::map(t, t.gadget + CAPE_PUBLISH_TAG_OFFSET, CAPE_PUBLISH_ARENA_SPAN, false, why,
                                            CAPE_PUBLISH_ARENA_ADDRESS);
  if (!s) return nullptr;
  {
    // A child forked by the program must not write into the node's published pages.
    AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
    long r = remote.syscall(SYS_madvise, static_cast<long>(CAPE_PUBLISH_ARENA_ADDRESS),
                            static_cast<long>(CAPE_PUBLISH_ARENA_SPAN), MADV_DONTFORK);
    remote.restore();
    if (r != 0) {
      *why = std::string("madvise(MADV_DONTFORK) of the arena: ") + std::strerror(static_cast<int>(-r));
      AutoRemoteSyscalls undo(t.tracee.pid(), t.tid, t.gadget);
      undo.syscall(SYS_munmap, static_cast<long>(CAPE_PUBLISH_ARENA_ADDRESS), static_cast<long>(CAPE_PUBLISH_ARENA_SPAN));
      undo.restore();
      return nullptr;
    }
  }
  return std::shared_ptr<PublishArena>(new PublishArena(std::move(s)));
}

uint8_t* PublishArena::take_slot() {
  const uint64_t capacity = static_cast<uint64_t>(end_ - slots_begin_) / kPage;
  uint64_t i = next_.fetch_add(1);
  if (i >= capacity) {
    next_.fetch_sub(1);
    return nullptr;
  }
  return slots_begin_ + i * kPage;
}

}  // namespace cape::monitor
