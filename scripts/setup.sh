#!/usr/bin/env bash
# setup.sh - installs the system packages stitchbench needs, when they are missing (Debian 12,
# Ubuntu 24.04). Idempotent and silent when there is nothing to do; never installs as non-root.
#
# Usage: scripts/setup.sh [--check]
#   --check   only report what is missing; exit 1 if something is
set -u

check_only=0
[ "${1:-}" = "--check" ] && check_only=1

# Build and test dependencies (C side).
packages=(build-essential pkg-config ninja-build libyaml-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev
	libcmocka-dev gnuplot-nox libmicrohttpd-dev)
# Tests: reports are opened in headless Chromium (tests/e2e/test_report.sh).
packages+=(chromium)
# Tests: a single-node Slurm started in a temporary folder (tests/e2e/test_slurm.sh).
packages+=(slurmctld slurmd slurm-client munge)

# The workers need a Python with torch, numpy and pytest. On GPU nodes a CUDA torch is usually
# already installed with pip: installing Debian's CPU torch beside it would only shadow it, so the
# Python packages are added only when no interpreter provides them.
py_has() { # module...
	local py
	for py in "${STITCHBENCH_PYTHON:-}" python3 /usr/bin/python3; do
		[ -n "$py" ] || continue
		"$py" -c "import $(IFS=,; echo "$*")" >/dev/null 2>&1 && return 0
	done
	return 1
}
py_has torch || packages+=(python3-torch)
py_has numpy || packages+=(python3-numpy)
py_has torch pytest || packages+=(python3-pytest)
# load_inline needs torch's C++ headers and pybind11's: pip's torch ships them, Debian's python3-torch
# only recommends them (libtorch-dev, pybind11-dev) and the install below skips recommendations.
torch_headers() {
	local py
	for py in "${STITCHBENCH_PYTHON:-}" python3 /usr/bin/python3; do
		[ -n "$py" ] || continue
		"$py" -c 'import os, torch.utils.cpp_extension as c
raise SystemExit(not any(os.path.exists(os.path.join(p, "torch", "extension.h")) for p in c.include_paths()))' \
			>/dev/null 2>&1 && return 0
	done
	return 1
}
torch_headers || packages+=(libtorch-dev pybind11-dev)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# python3-torch from Debian is importable only by /usr/bin/python3; the check above already
# looked there, so a missing python3-torch here really means no interpreter has torch.

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$check_only" = 1 ]; then
	echo "missing packages: ${missing[*]}"
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "setup.sh: apt-get not found; install these packages by hand: ${missing[*]}" >&2
	exit 3
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: these packages are missing: ${missing[*]}" >&2
	echo "setup.sh: run as root, or:  sudo apt-get install -y ${missing[*]}" >&2
	exit 3
fi

echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Update the package lists only when they are absent or older than a day: repeated runs stay fast.
lists=/var/lib/apt/lists
if [ -z "$(find "$lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -n 1)" ]; then
	apt-get update -qq || { echo "setup.sh: apt-get update failed" >&2; exit 3; }
fi
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/stitchbench-setup.log 2>&1; then
	tail -n 20 /tmp/stitchbench-setup.log >&2
	echo "setup.sh: apt-get install failed (full log: /tmp/stitchbench-setup.log)" >&2
	exit 3
fi
echo "setup.sh: done"
