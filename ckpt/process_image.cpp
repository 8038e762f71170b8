#include "ckpt/process_image.h"

#include <cstring>

namespace cape::ckpt {
namespace {

enum Tag : uint16_t { kExe = 1, kState = 2, kCwd = 3, kXstate = 4, kMapping = 5, kFile = 6, kFd = 7, kSigaction = 8, kLayout = 9, kOrigin = 10, kThreadBlock = 11, kFrameBoundary = 12 };
constexpr size_t kLayoutValues = 9;
constexpr size_t kMaxPath = 4096;
constexpr size_t kStateSize = 16 + 7 * 8;

size_t pad8(size_t n) { return (n + 7) & ~size_t{7}; }

class Writer {
 public:
  void begin(Tag tag) {
    start_ = out_.size();
    out_.resize(start_ + 8, 0);
    std::memcpy(out_.data() + start_, &tag, 2);
  }
  void end() {
    auto len = static_cast<uint32_t>(out_.size() - start_ - 8);
    std::memcpy(out_.data() + start_ + 4, &len, 4);
    out_.resize(start_ + 8 + pad8(len), 0);
  }
  template <class T>
  void put(T v) {
    size_t at = out_.size();
    out_.resize(at + sizeof v);
    std::memcpy(out_.data() + at, &v, sizeof v);
  }
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void text(const std::string& s) { bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()}); }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
  size_t start_ = 0;
};

// One record's payload, read front to back; every read is checked against its length.
class Reader {
 public:
  Reader(std::span<const uint8_t> p, size_t base, const char* what) : p_(p), base_(base), what_(what) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::vector<uint8_t> bytes(size_t n) {
    need(n);
    std::vector<uint8_t> v(p_.begin() + at_, p_.begin() + at_ + n);
    at_ += n;
    return v;
  }
  std::string text(size_t n) {
    if (n > kMaxPath) fail("a path of " + std::to_string(n) + " bytes (at most 4096)");
    auto b = bytes(n);
    return {b.begin(), b.end()};
  }
  std::string rest_text() { return text(p_.size() - at_); }
  void done() {
    if (at_ != p_.size()) fail(std::to_string(p_.size() - at_) + " bytes too many");
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(std::string("process section: the ") + what_ + " record has " + why + " (at byte " +
                std::to_string(base_) + " of the section)");
  }

 private:
  void need(size_t n) const {
    if (n > p_.size() - at_) fail("too few bytes");
  }
  std::span<const uint8_t> p_;
  size_t base_;
  const char* what_;
  size_t at_ = 0;
};

}  // namespace

const char* to_string(ProcessMapping::What w) {
  switch (w) {
    case ProcessMapping::What::anon: return "anon";
    case ProcessMapping::What::file: return "file";
    case ProcessMapping::What::heap: return "heap";
    case ProcessMapping::What::stack: return "stack";
    case ProcessMapping::What::vdso: return "vdso";
    case ProcessMapping::What::vvar: return "vvar";
    case ProcessMapping::What::vsyscall: return "vsyscall";
    case ProcessMapping::What::special: return "special";
  }
  return "?";
}

std::vector<uint8_t> encode_process(const ProcessImage& p) {
  Writer w;
  w.begin(kExe);
  w.put<uint64_t>(p.exe_size);
  w.put<uint64_t>(p.exe_hash);
  w.put<uint32_t>(static_cast<uint32_t>(p.build_id.size()));
  w.put<uint32_t>(static_cast<uint32_t>(p.exe.size()));
  w.bytes(p.build_id);
  w.text(p.exe);
  w.end();
  w.begin(kState);
  w.put<uint32_t>(p.pid);
  w.put<uint32_t>(p.rseq_length);
  w.put<uint32_t>(p.rseq_signature);
  w.put<uint32_t>(0);
  for (uint64_t v : {p.start_brk, p.brk, p.sig_blocked, p.sig_ignored, p.vdso_hash, p.rseq_address, p.tid_address})
    w.put<uint64_t>(v);
  w.end();
  if (!p.layout.empty()) {
    w.begin(kLayout);
    for (uint64_t v : p.layout) w.put<uint64_t>(v);
    w.end();
  }
  if (p.thread_block_high) {
    w.begin(kThreadBlock);
    w.put<uint64_t>(p.thread_block_low);
    w.put<uint64_t>(p.thread_block_high);
    w.end();
  }
  if (p.frame_boundary) {
    w.begin(kFrameBoundary);
    w.put<uint64_t>(p.frame_boundary);
    w.end();
  }
  if (p.under_monitor) {
    w.begin(kOrigin);
    w.put<uint32_t>(1);
    w.put<uint32_t>(0);
    w.end();
  }
  w.begin(kCwd);
  w.text(p.cwd);
  w.end();
  if (!p.xstate.empty()) {
    w.begin(kXstate);
    w.bytes(p.xstate);
    w.end();
  }
  for (const ProcessMapping& m : p.mappings) {
    w.begin(kMapping);
    w.put<uint64_t>(m.start);
    w.put<uint64_t>(m.end);
    w.put<uint64_t>(m.offset);
    w.put<uint8_t>(m.prot);
    w.put<uint8_t>(m.shared ? 1 : 0);
    w.put<uint8_t>(static_cast<uint8_t>(m.what));
    w.put<uint8_t>(0);
    w.put<uint32_t>(0);
    w.text(m.path);
    w.end();
  }
  for (const ProcessFile& f : p.files) {
    w.begin(kFile);
    w.put<uint64_t>(f.size);
    w.put<uint64_t>(f.hash);
    w.text(f.path);
    w.end();
  }
  for (const ProcessFd& f : p.fds) {
    w.begin(kFd);
    w.put<int32_t>(f.fd);
    w.put<uint32_t>(f.flags);
    w.put<uint64_t>(f.offset);
    w.text(f.path);
    w.end();
  }
  for (const ProcessSigaction& s : p.sigactions) {
    w.begin(kSigaction);
    w.put<uint32_t>(s.signo);
    w.put<uint32_t>(0);
    for (uint64_t v : {s.handler, s.flags, s.restorer, s.mask}) w.put<uint64_t>(v);
    w.end();
  }
  return w.take();
}

ProcessImage decode_process(std::span<const uint8_t> in) {
  ProcessImage p;
  bool have_exe = false, have_state = false, have_cwd = false;
  size_t at = 0;
  uint64_t prev_end = 0;
  while (at < in.size()) {
    if (in.size() - at < 8) throw Error("process section: truncated record header (at byte " + std::to_string(at) + ")");
    uint16_t tag, reserved;
    uint32_t len;
    std::memcpy(&tag, in.data() + at, 2);
    std::memcpy(&reserved, in.data() + at + 2, 2);
    std::memcpy(&len, in.data() + at + 4, 4);
    if (reserved != 0) throw Error("process section: nonzero reserved bytes (at byte " + std::to_string(at + 2) + ")");
    if (pad8(len) > in.size() - at - 8)
      throw Error("process section: record of " + std::to_string(len) + " bytes runs past the section (at byte " +
                  std::to_string(at) + ")");
    auto payload = in.subspan(at + 8, len);
    for (size_t k = len; k < pad8(len); ++k)
      if (in[at + 8 + k] != 0) throw Error("process section: nonzero padding (at byte " + std::to_string(at + 8 + k) + ")");
    switch (tag) {
      case kExe: {
        Reader r(payload, at, "executable");
        if (have_exe) r.fail("a duplicate");
        p.exe_size = r.get<uint64_t>();
        p.exe_hash = r.get<uint64_t>();
        auto id_len = r.get<uint32_t>();
        auto path_len = r.get<uint32_t>();
        if (id_len > 64) r.fail("a build id of " + std::to_string(id_len) + " bytes (at most 64)");
        p.build_id = r.bytes(id_len);
        p.exe = r.text(path_len);
        r.done();
        have_exe = true;
        break;
      }
      case kState: {
        Reader r(payload, at, "state");
        if (have_state) r.fail("a duplicate");
        if (len != kStateSize) r.fail(std::to_string(len) + " bytes instead of " + std::to_string(kStateSize));
        p.pid = r.get<uint32_t>();
        p.rseq_length = r.get<uint32_t>();
        p.rseq_signature = r.get<uint32_t>();
        if (r.get<uint32_t>() != 0) r.fail("nonzero reserved bytes");
        for (uint64_t* v : {&p.start_brk, &p.brk, &p.sig_blocked, &p.sig_ignored, &p.vdso_hash, &p.rseq_address, &p.tid_address})
          *v = r.get<uint64_t>();
        have_state = true;
        break;
      }
      case kLayout: {
        Reader r(payload, at, "layout");
        if (!p.layout.empty() || len != 8 * kLayoutValues) r.fail("a bad size or a duplicate");
        for (size_t i = 0; i < kLayoutValues; ++i) p.layout.push_back(r.get<uint64_t>());
        break;
      }
      case kThreadBlock: {
        Reader r(payload, at, "thread block");
        p.thread_block_low = r.get<uint64_t>();
        p.thread_block_high = r.get<uint64_t>();
        r.done();
        if (p.thread_block_low >= p.thread_block_high) r.fail("an empty range");
        break;
      }
      case kFrameBoundary: {
        Reader r(payload, at, "frame boundary");
        p.frame_boundary = r.get<uint64_t>();
        r.done();
        break;
      }
      case kOrigin: {
        Reader r(payload, at, "origin");
        auto flags = r.get<uint32_t>();
        if (flags & ~1u || r.get<uint32_t>() != 0) r.fail("unknown flags");
        r.done();
        p.under_monitor = flags & 1;
        break;
      }
      case kCwd: {
        Reader r(payload, at, "cwd");
        p.cwd = r.rest_text();
        have_cwd = true;
        break;
      }
      case kXstate: {
        Reader r(payload, at, "xstate");
        if (!p.xstate.empty() || len == 0 || len > 65536) r.fail("a bad size or a duplicate");
        p.xstate = r.bytes(len);
        break;
      }
      case kMapping: {
        Reader r(payload, at, "mapping");
        ProcessMapping m;
        m.start = r.get<uint64_t>();
        m.end = r.get<uint64_t>();
        m.offset = r.get<uint64_t>();
        m.prot = r.get<uint8_t>();
        auto shared = r.get<uint8_t>();
        auto what = r.get<uint8_t>();
        if (r.get<uint8_t>() != 0 || r.get<uint32_t>() != 0 || shared > 1) r.fail("nonzero reserved bytes");
        if (what > static_cast<uint8_t>(ProcessMapping::What::special)) r.fail("unknown kind " + std::to_string(what));
        if (m.prot & ~7) r.fail("protection bits beyond rwx");
        m.shared = shared;
        m.what = static_cast<ProcessMapping::What>(what);
        m.path = r.rest_text();
        if (m.start % kMapPage || m.end % kMapPage || m.start >= m.end)
          r.fail("a range that is empty or not page aligned");
        if (m.start < prev_end) r.fail("a range that overlaps or precedes the one before (mappings must be sorted)");
        prev_end = m.end;
        p.mappings.push_back(std::move(m));
        break;
      }
      case kFile: {
        Reader r(payload, at, "file");
        ProcessFile f;
        f.size = r.get<uint64_t>();
        f.hash = r.get<uint64_t>();
        f.path = r.rest_text();
        p.files.push_back(std::move(f));
        break;
      }
      case kFd: {
        Reader r(payload, at, "fd");
        ProcessFd f;
        f.fd = r.get<int32_t>();
        f.flags = r.get<uint32_t>();
        f.offset = r.get<uint64_t>();
        f.path = r.rest_text();
        if (f.fd < 3) r.fail("descriptor " + std::to_string(f.fd) + " (the standard streams are not recorded)");
        p.fds.push_back(std::move(f));
        break;
      }
      case kSigaction: {
        Reader r(payload, at, "sigaction");
        ProcessSigaction s;
        s.signo = r.get<uint32_t>();
        if (r.get<uint32_t>() != 0) r.fail("nonzero reserved bytes");
        for (uint64_t* v : {&s.handler, &s.flags, &s.restorer, &s.mask}) *v = r.get<uint64_t>();
        r.done();
        if (s.signo < 1 || s.signo > 64) r.fail("signal " + std::to_string(s.signo));
        p.sigactions.push_back(s);
        break;
      }
      default:
        throw Error("process section: unknown record tag " + std::to_string(tag) + " (at byte " + std::to_string(at) + ")");
    }
    at += 8 + pad8(len);
  }
  if (!have_exe || !have_state || !have_cwd)
    throw Error(std::string("process section: no ") + (!have_exe ? "executable" : !have_state ? "state" : "cwd") +
                " record");
  return p;
}

}  // namespace cape::ckpt
