#include "cli/ckpt_process.h"

#include <cinttypes>
#include <cstdio>

#include "ckpt/process_image.h"
#include "util/text.h"

namespace cape::cli {
namespace {

std::string hex(const std::vector<uint8_t>& b) {
  static const char d[] = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

std::string prot(uint8_t p) {
  return std::string(p & 1 ? "r" : "-") + (p & 2 ? "w" : "-") + (p & 4 ? "x" : "-");
}

}  // namespace

void print_process(const ckpt::Checkpoint& c) {
  if (c.process.empty()) return;
  ckpt::ProcessImage p = ckpt::decode_process(c.process);
  std::printf("  executable %s, build id %s, %" PRIu64 " bytes; process %u, cwd %s\n",
              util::printable(p.exe).c_str(), p.build_id.empty() ? "none" : hex(p.build_id).c_str(), p.exe_size, p.pid,
              util::printable(p.cwd).c_str());
  std::printf("  brk %s (heap from %s), FPU/vector state %zu bytes, rseq %s, signals blocked %#" PRIx64
              " ignored %#" PRIx64 ", %zu handlers\n",
              ckpt::hex_address(p.brk).c_str(), ckpt::hex_address(p.start_brk).c_str(), p.xstate.size(),
              p.rseq_address ? ckpt::hex_address(p.rseq_address).c_str() : "none", p.sig_blocked, p.sig_ignored,
              p.sigactions.size());
  for (const ckpt::ProcessMapping& m : p.mappings)
    std::printf("  map %s-%s %s%s %-8s %s\n", ckpt::hex_address(m.start).c_str(), ckpt::hex_address(m.end).c_str(),
                prot(m.prot).c_str(), m.shared ? "s" : "p", ckpt::to_string(m.what), util::printable(m.path).c_str());
  for (const ckpt::ProcessFd& f : p.fds)
    std::printf("  fd %d %s at offset %" PRIu64 " (reopened read-only on restart)\n", f.fd,
                util::printable(f.path).c_str(), f.offset);
}

std::string process_json(const ckpt::Checkpoint& c) {
  if (c.process.empty()) return "";
  ckpt::ProcessImage p = ckpt::decode_process(c.process);
  std::string out = ",\"process\":{\"executable\":" + util::json_quoted(p.exe) + ",\"build_id\":\"" + hex(p.build_id) +
                    "\",\"pid\":" + std::to_string(p.pid) + ",\"cwd\":" + util::json_quoted(p.cwd) +
                    ",\"start_brk\":" + std::to_string(p.start_brk) + ",\"brk\":" + std::to_string(p.brk) +
                    ",\"xstate_bytes\":" + std::to_string(p.xstate.size()) + ",\"maps\":[";
  for (size_t i = 0; i < p.mappings.size(); ++i) {
    const ckpt::ProcessMapping& m = p.mappings[i];
    out += std::string(i ? "," : "") + "{\"start\":" + std::to_string(m.start) + ",\"end\":" + std::to_string(m.end) +
           ",\"prot\":\"" + prot(m.prot) + "\",\"shared\":" + (m.shared ? "true" : "false") + ",\"kind\":\"" +
           ckpt::to_string(m.what) + "\",\"offset\":" + std::to_string(m.offset) + ",\"path\":" + util::json_quoted(m.path) + "}";
  }
  out += "],\"fds\":[";
  for (size_t i = 0; i < p.fds.size(); ++i)
    out += std::string(i ? "," : "") + "{\"fd\":" + std::to_string(p.fds[i].fd) + ",\"offset\":" +
           std::to_string(p.fds[i].offset) + ",\"path\":" + util::json_quoted(p.fds[i].path) + "}";
  return out + "]}";
}

void stat_process(const ckpt::Checkpoint& c) {
  if (c.process.empty()) return;
  ckpt::ProcessImage p = ckpt::decode_process(c.process);
  uint64_t mapped = 0, writable = 0;
  for (const ckpt::ProcessMapping& m : p.mappings) {
    if (m.what == ckpt::ProcessMapping::What::vdso || m.what == ckpt::ProcessMapping::What::vvar ||
        m.what == ckpt::ProcessMapping::What::vsyscall)
      continue;
    if (m.prot) mapped += m.end - m.start;  // (not reservations: libcape's heap keeps terabytes PROT_NONE)
    if (m.prot & 2) writable += m.end - m.start;
  }
  std::printf("  process %u (%s): %zu mappings, %" PRIu64 " bytes mapped accessible, %" PRIu64 " writable, %" PRIu64
              " stored (%.1f%% of the writable)\n",
              p.pid, util::printable(p.exe).c_str(), p.mappings.size(), mapped, writable, c.memory_bytes(),
              writable ? 100.0 * double(c.memory_bytes()) / double(writable) : 0.0);
}

}  // namespace cape::cli
