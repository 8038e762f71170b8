#include "monitor/places.h"

#include <cstdio>
#include <cstdlib>
#include <span>

#include "ckpt/format.h"

namespace cape::monitor {

namespace {

// "file:line" of a code address, through addr2line (only for reports).
std::string source_line(const std::string& exe, uint64_t address) {
  std::string cmd = "addr2line -e '" + exe + "' " + ckpt::hex_address(address) + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
  if (!p) return "?";
  char buf[1024];
  if (!std::fgets(buf, sizeof buf, p.get())) return "?";
  std::string s = buf;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty() || s.rfind("??", 0) == 0) return "?";
  auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

}  // namespace

void Places::at_start(const Tracee& t, uint64_t boundary) {
  start_pc_ = 0;
  // The translator named the region (cape_region_begin): start_site() never asks where start()
  // was called, so its return address is not read (a process_vm_readv per start(), issue 14).
  // CAPE_SITE_FROM_BEGIN=0 reads it anyway (the old way, for A/B figures).
  static const bool from_begin =
      !(std::getenv("CAPE_SITE_FROM_BEGIN") && std::string(std::getenv("CAPE_SITE_FROM_BEGIN")) == "0");
  if (from_begin && !region_site_.empty()) return;
  if (boundary >= 8) {
    uint64_t ra = 0;
    std::span<uint8_t> b(reinterpret_cast<uint8_t*>(&ra), 8);
    if (t.read_bytes_fallible(boundary - 8, b) == 8) start_pc_ = ra;
  }
}

const ckpt::SymbolTable& Places::symbols(const AddressSpace& as) {
  if (!symbols_) {
    try {
      symbols_ = std::make_unique<ckpt::SymbolTable>(ckpt::SymbolTable::load(as.exe(), as.load_base()));
    } catch (const ckpt::Error&) {
      symbols_ = std::make_unique<ckpt::SymbolTable>();
    }
  }
  return *symbols_;
}

std::string Places::start_site(const AddressSpace& as) {
  if (!region_site_.empty()) return region_site_;
  if (!start_pc_) return "?";
  auto it = sites_.find(start_pc_);
  if (it != sites_.end()) return it->second;
  uint64_t base = as.load_base();
  std::string where = source_line(as.exe(), (symbols(as).pie() ? start_pc_ - base : start_pc_) - 1);
  if (where == "?") {
    // No debug information (built without -g): the function and offset still say where.
    if (const ckpt::Symbol* f = symbols(as).find_function(start_pc_ - 1))
      where = f->name + "+" + ckpt::hex_address(start_pc_ - f->address);
  }
  sites_.emplace(start_pc_, where);
  return where;
}

}  // namespace cape::monitor
