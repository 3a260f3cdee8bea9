#!/usr/bin/env bash
# Build the Debian package (debian/: debhelper, CMake) the way a packager
# does, from a copy of the source tree so the tree itself stays clean, and
# check it with lintian (a warning or an error fails).
#   bash tools/deb/build.sh [OUT=build-deb]
# Leaves OUT/seekless_VERSION_ARCH.deb (and the -dbgsym package, .changes,
# .buildinfo); OUT/src is the copy it was built in.  DEB_BUILD_OPTIONS is
# passed on (nocheck skips the unit tests the build runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(realpath -m "${1:-build-deb}")
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# the tools, then what debian/control's Build-Depends lists
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends \
       debhelper dpkg-dev fakeroot lintian ||
   ! DEBIAN_FRONTEND=noninteractive $sudo apt-get build-dep -y --no-install-recommends ./; then
  echo "deb: installing the build dependencies failed (apt's reason above)" >&2
  exit 1
fi

# the source files (tracked, or new and not ignored): no build folders
# the commit `seekless --version` names (debian/rules passes it on)
SEEKLESS_COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
export SEEKLESS_COMMIT
rm -rf "$out"
mkdir -p "$out/src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard | tar --null -T - -c | tar -x -C "$out/src"
else
  tar -c --exclude='./build*' . | tar -x -C "$out/src"
fi
(cd "$out/src" &&
   DEB_BUILD_OPTIONS="parallel=$(nproc)${DEB_BUILD_OPTIONS:+ $DEB_BUILD_OPTIONS}" \
   dpkg-buildpackage -us -uc -b)
lintian --fail-on error,warning "$out"/seekless_*.changes
echo "deb: $(ls "$out"/seekless_*.deb)"
