#include "monitor/deferred_calls.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "ckpt/format.h"
#include "util/error.h"

namespace cape::monitor {

bool deferrable(int op) {
  switch (op) {
    case CAPE_OP_RECEIVE: case CAPE_OP_STOP: case CAPE_OP_SEND: case CAPE_OP_WAIT_FOR: case CAPE_OP_INJECT:
    case CAPE_OP_CREATE: case CAPE_OP_REGION_BEGIN:
    case CAPE_OP_SET_SHARED: case CAPE_OP_SET_PRIVATE: case CAPE_OP_SET_FIRSTPRIVATE: case CAPE_OP_SET_LASTPRIVATE:
    case CAPE_OP_SET_COPYIN: case CAPE_OP_SET_COPYPRIVATE: case CAPE_OP_SET_THREADPRIVATE:
    case CAPE_OP_SET_DEFAULT_NONE: case CAPE_OP_REDUCTION: case CAPE_OP_SET_ORDER: case CAPE_OP_CRITICAL_SHARED:
      return true;
    default: return false;
  }
}

DeferredCalls read_deferred_calls(const Tracee& t, uint64_t r8, uint64_t r9) {
  uint64_t n = r8 & 0xff;
  if ((r8 & CAPE_TRAP_MAGIC_MASK) != CAPE_TRAP_MAGIC || n == 0 || n > CAPE_MAX_DEFERRED_CALLS)
    throw UserError("a runtime call with bad deferred calls (r8 = " + ckpt::hex_address(r8) +
                    "; libcape and cape come from different versions?)");
  // The calls and, right after the first CAPE_MAX_DEFERRED, their names, then the rest (a
  // libcape that keeps the names elsewhere has them read one by one, as a trap's own call's).
  static thread_local cape_deferred_list list;  // (5 KiB: off the stack)
  constexpr size_t head = offsetof(cape_deferred_list, more), names_at = offsetof(cape_deferred_list, names);
  size_t want = head + (n > CAPE_MAX_DEFERRED ? n - CAPE_MAX_DEFERRED : 0) * sizeof(cape_deferred);
  size_t need = n > CAPE_MAX_DEFERRED ? want : n * sizeof(cape_deferred);
  size_t got = t.read_bytes_fallible(r9, {reinterpret_cast<uint8_t*>(&list), want});
  if (got < need) t.read_bytes(r9, {reinterpret_cast<uint8_t*>(&list), need});
  DeferredCalls d{n, list.calls, list.more, r9 + names_at,
                  std::string_view(list.names[0], got > names_at ? std::min(got, head) - names_at : 0)};
  for (uint64_t i = 0; i < n; i++)
    if ((d[i].op & CAPE_TRAP_MAGIC_MASK) != CAPE_TRAP_MAGIC || !deferrable(static_cast<int>(d[i].op & 0xff)))
      throw UserError("a runtime call with a bad deferred call (" + ckpt::hex_address(d[i].op) +
                      "; libcape and cape come from different versions?)");
  return d;
}

}  // namespace cape::monitor
