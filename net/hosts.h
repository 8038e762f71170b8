// Where the ranks of a job run: OpenMPI's host syntax and slot placement.
//
//   hostfile:  "node1 slots=4", "node2" (1 slot), "# comments", blank lines
//   -H list:   "node1,node2:2" (host[:slots])
//
// Rank 0, the master, runs where `cape run` runs (it passes the program's output through).
// Ranks 1..N-1 fill the hosts' slots in order (OpenMPI's --map-by slot). More ranks than
// slots is an error unless `oversubscribe`, which keeps wrapping around the hosts.
#pragma once

#include <string>
#include <vector>

namespace cape::net {

struct HostSlots {
  std::string host;
  int slots = 1;
};

std::vector<HostSlots> parse_hostfile(const std::string& path);  // throws UserError (file:line)
std::vector<HostSlots> parse_host_list(const std::string& list);  // throws UserError
// The host of each slave rank 1..n-1 (index 0 is rank 1).
std::vector<std::string> place_slaves(const std::vector<HostSlots>& hosts, int n, bool oversubscribe);
bool is_local_host(const std::string& host);  // localhost, 127.x, ::1, this machine's name

}  // namespace cape::net
