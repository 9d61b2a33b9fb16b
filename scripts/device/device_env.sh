# Sourced by the device scripts (lease.sh, fault_check.sh) on the H200 machine, from the
# repository root: the CUDA toolkit on PATH and its libraries on LD_LIBRARY_PATH, the repository's
# include/ and data/ for the carried binaries, and what .carry holds unpacked: the CUTLASS headers
# (scripts/device/pack_carry.sh) and the compile cache (scripts/device/kcache.sh pack).
for d in /usr/local/cuda/bin /usr/local/cuda-13*/bin; do [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break; done
for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -e "$d/libcublas.so.13" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
export CKS_INCLUDE_DIR="$PWD/include" CKS_DATA_DIR="$PWD/data"
# CUTLASS headers travel compressed (scripts/device/pack_carry.sh): 27 MB of headers are 1 MB of xz.
if [ ! -d third_party/cutlass/include ] && [ -f .carry/cutlass.tar.xz ]; then
  mkdir -p third_party && tar -xJf .carry/cutlass.tar.xz -C third_party
fi
# A carried compile cache (scripts/device/kcache.sh pack): kernels built in earlier leases are
# found by their own key and not compiled again.
if [ -f .carry/kcache.tar.xz ] && [ ! -f build/kernel-cache/.carried ]; then
  mkdir -p build && tar -xJf .carry/kcache.tar.xz -C build --skip-old-files &&
    touch build/kernel-cache/.carried && echo "carried compile cache: $(ls build/kernel-cache/*.so | wc -l) libraries" >&2
fi

