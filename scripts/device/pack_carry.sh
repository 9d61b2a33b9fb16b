#!/usr/bin/env bash
# Fills .carry/ (ignored) with what a device lease needs beside the tracked tree: the host
# binaries built here (libstdc++ static, glibc 2.36 runs on the H200 host's 2.39) and the CUTLASS
# headers as one xz tarball (1 MB instead of 27 MB; lease.sh unpacks it into third_party/).
# A call's working tree may not exceed 64 MiB: committed shards (data/shards, tens of MB) count
# too, so move them out for the calls (`scripts/device/slim_tree.sh out`, and `in` after);
# plans the device needs are built from code, not from the shards.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .carry/bin
cp build/bin/cks build/bin/cks-worker .carry/bin/
tar -cJf .carry/cutlass.tar.xz -C third_party cutlass/include cutlass/tools cutlass/.version
du -sh .carry
echo "carry: [\".carry\"]  (third_party/cutlass is unpacked from .carry/cutlass.tar.xz on the machine)"
