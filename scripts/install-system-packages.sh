#!/usr/bin/env bash
# Debian packages lift needs: an OpenCL CPU runtime (PoCL) when no OpenCL platform is present, the ICD
# loader, and, with --test, oclgrind (the simulator the tests use to find data races and bad accesses), with
# --bench, CLBlast (the tuned OpenCL BLAS the benchmarks compare with, through pyclblast).
set -euo pipefail

packages=()
if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then
    packages+=(pocl-opencl-icd)
fi
if ! ldconfig -p 2>/dev/null | grep -q libOpenCL.so.1; then
    packages+=(ocl-icd-libopencl1)
fi
if [ "${1:-}" = "--test" ] && ! command -v oclgrind >/dev/null 2>&1; then
    packages+=(oclgrind)
fi
if [ "${1:-}" = "--bench" ] && ! ldconfig -p 2>/dev/null | grep -q libclblast.so; then
    packages+=(libclblast-dev)
fi
[ ${#packages[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "lift needs an OpenCL runtime: install ${packages[*]} (or your system's equivalent)" >&2
    exit 1
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing ${packages[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
