#include "net/hosts.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "util/error.h"

namespace cape::net {
namespace {

int parse_slots(const std::string& s, const std::string& where) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(s) < 1)
    throw UserError(where + ": bad slot count '" + s + "'");
  return std::stoi(s);
}

}  // namespace

std::vector<HostSlots> parse_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError("cannot read hostfile " + path);
  std::vector<HostSlots> out;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    std::string where = path + ":" + std::to_string(lineno);
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string host, w;
    if (!(words >> host)) continue;
    HostSlots h{host, 1};
    while (words >> w) {
      if (w.rfind("slots=", 0) == 0)
        h.slots = parse_slots(w.substr(6), where);
      else if (w.rfind("max_slots=", 0) == 0)
        parse_slots(w.substr(10), where);  // accepted, as OpenMPI; the limit is `slots`
      else
        throw UserError(where + ": unknown word '" + w + "' (expected slots=K)");
    }
    out.push_back(h);
  }
  if (out.empty()) throw UserError("hostfile " + path + " names no host");
  return out;
}

std::vector<HostSlots> parse_host_list(const std::string& list) {
  std::vector<HostSlots> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    HostSlots h{item, 1};
    // host:slots (IPv6 literals go in brackets: [::1]:2)
    size_t colon = item.rfind(':');
    size_t bracket = item.rfind(']');
    if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
      h.host = item.substr(0, colon);
      h.slots = parse_slots(item.substr(colon + 1), "-H " + item);
    }
    if (h.host.size() > 2 && h.host.front() == '[' && h.host.back() == ']')
      h.host = h.host.substr(1, h.host.size() - 2);
    out.push_back(h);
  }
  if (out.empty()) throw UserError("-H names no host");
  return out;
}

std::vector<std::string> place_slaves(const std::vector<HostSlots>& hosts, int n, bool oversubscribe) {
  int total = 0;
  for (const auto& h : hosts) total += h.slots;
  int slaves = n - 1;
  if (slaves > total && !oversubscribe)
    throw UserError(std::to_string(slaves) + " slave ranks but only " + std::to_string(total) +
                    " slot(s) on the given hosts; add slots (host slots=K, host:K) or "
                    "--oversubscribe");
  std::vector<std::string> out;
  // Fill slot by slot, host by host; wrap around when oversubscribing. Bounded by `slaves`.
  while (static_cast<int>(out.size()) < slaves)
    for (const auto& h : hosts)
      for (int s = 0; s < h.slots && static_cast<int>(out.size()) < slaves; ++s) out.push_back(h.host);
  return out;
}

bool is_local_host(const std::string& host) {
  if (host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0) return true;
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 && host == name;
}

}  // namespace cape::net
