#!/usr/bin/env bash
# A stand-in for a correct `cape run`, to check the contract tests themselves: it runs the
# gcc -fopenmp build that run.sh made beside ./prog (./native) with N threads. Every contract
# test but the determinism one must pass with it (contract.*.selfcheck): a program whose
# native output is not deterministic, or a comparison that no implementation could meet,
# fails there.   native_cape.sh run -n N [options] -- ./prog
n=
while [ $# -gt 0 ]; do
  case $1 in
    -n) n=$2; shift 2 ;;
    --) shift; break ;;
    *) shift ;;
  esac
done
OMP_NUM_THREADS=$n OMP_WAIT_POLICY=passive exec ./native
