#!/usr/bin/env bash
# paper-repro/cluster.sh: set-up and removal of the emulated cluster (network namespaces,
# veth pairs, a bridge, tc limits), and its refusals. Needs root: skipped (77) otherwise.
set -u   # no pipefail: grep -q ends pipelines early on purpose
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root"; exit 77; }
cl=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# An id no other run uses now (run.py takes 101..200 from the bottom).
id=
for i in $(seq 200 -1 150); do [ -e /run/cape-cluster/$i ] || { id=$i; break; }; done
[ -n "$id" ] || { echo "no free id"; exit 1; }
trap '"$cl" down $id >/dev/null 2>&1' EXIT

remains() { { ip netns list | grep -E "^cape$id-"; ip -o link show | grep -E ": (cv$id-|cbr$id)"; } 2>/dev/null; }

# Up: 3 nodes at 100 Mb/s.
"$cl" up $id 3 --link 100mbit >/dev/null || bad "up failed"
"$cl" check $id || bad "check after up"
for k in 0 1 2; do
  ip netns list | grep -q "^cape$id-$k" || bad "namespace cape$id-$k missing"
  ip -n cape$id-$k -o addr show eth0 | grep -q "10.77.$id.$((k + 1))/24" || bad "node $k has no address"
  tc -n cape$id-$k qdisc show dev eth0 | grep -q "tbf.*rate 100Mbit" || bad "node $k: no 100 Mbit limit inside"
  tc qdisc show dev cv$id-$k | grep -q "tbf.*rate 100Mbit" || bad "node $k: no 100 Mbit limit on the bridge side"
done
# The addresses exist only inside: not in the root namespace (but the bridge's).
ip -o addr show | grep -q "10.77.$id.1/" && bad "a node's address in the root namespace"
# TCP from node 1 to node 2.
"$cl" exec $id 2 python3 -c "
import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('10.77.$id.3', 7777)); s.listen(1); s.settimeout(20); c,_=s.accept(); c.sendall(c.recv(100)[::-1])" &
srv=$!
sleep 0.5
got=$("$cl" exec $id 1 python3 -c "
import socket,time
for i in range(50):
  try:
    s=socket.create_connection(('10.77.$id.3', 7777), timeout=5); break
  except OSError: time.sleep(0.1)
s.sendall(b'cape'); print(s.recv(100).decode())")
wait $srv
[ "$got" = epac ] || bad "TCP between node 1 and node 2: got '$got'"
# The same id twice is refused, and says what to do.
msg=$("$cl" up $id 2 2>&1) && bad "a second up of the same id succeeded"
echo "$msg" | grep -q "down $id" || bad "the refusal does not say how to remove it: $msg"
# Down removes everything.
"$cl" down $id
[ -z "$(remains)" ] || bad "left after down: $(remains)"
"$cl" check $id && bad "check after down succeeded"
# Down after a crash (state lost) still removes what the id named.
"$cl" up $id 2 --link none >/dev/null || bad "up --link none failed"
tc -n cape$id-0 qdisc show dev eth0 | grep -q tbf && bad "--link none has a limit"
rm -rf /run/cape-cluster/$id
"$cl" down $id
[ -z "$(remains)" ] || bad "left after down without state: $(remains)"
# Bad arguments.
msg=$("$cl" up $id 2 --link 5mbit 2>&1) && bad "--link 5mbit accepted"
echo "$msg" | grep -q "100mbit, 1gbit or none" || bad "--link 5mbit not refused clearly: $msg"
msg=$("$cl" up 0 2 2>&1) && bad "id 0 accepted"
echo "$msg" | grep -q "ID must be" || bad "id 0 not refused clearly: $msg"
[ -z "$(remains)" ] || bad "a refused up left: $(remains)"
# Not root: refused with what to do, before anything is made (run.py says it too).
if command -v setpriv >/dev/null; then
  nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
  msg=$($nobody "$cl" up $id 2 2>&1) && bad "up as nobody succeeded"
  echo "$msg" | grep -q "must run as root" || bad "up as nobody: $msg"
  msg=$($nobody /usr/bin/python3 "$(dirname "$cl")/run.py" 2>&1) && bad "run.py as nobody succeeded"
  echo "$msg" | grep -q "needs root" || bad "run.py as nobody: $msg"
  [ -z "$(remains)" ] || bad "a refused up left: $(remains)"
fi
[ $fail = 0 ] && echo "cluster.sh: set-up and removal OK"
exit $fail
