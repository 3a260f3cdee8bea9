#!/usr/bin/env bash
# The Debian package end to end, as root on a Debian 12 machine (CI): build
# it (tools/deb/build.sh, lintian included), install it with apt-get, check
# the files are where Debian puts them, run the installed seekless (version,
# a small scan, the units verified by systemd), then purge it and check
# nothing it installed is left.
#   bash tests/deb/run.sh [OUT=build-deb]
# A seekless already installed from elsewhere is refused, not replaced.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build-deb}
fail() { echo "deb test: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (apt-get install and purge)"
if dpkg-query -W -f='${Status}' seekless 2>/dev/null | grep -q "install ok installed"; then
  fail "a seekless package is installed already: remove it first"
fi

bash tools/deb/build.sh "$out"
deb=$(ls "$PWD/$out"/seekless_*.deb)

# a small photo tree from the build's mkcorpus (built here if missing)
if [ ! -x build/mkcorpus ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)" --target mkcorpus >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"; dpkg-query -W seekless >/dev/null 2>&1 && apt-get purge -y seekless >/dev/null 2>&1; true' EXIT
build/mkcorpus --files 30 --median 20k --seed 5 --no-sync "$work/photos" >/dev/null

DEBIAN_FRONTEND=noninteractive apt-get install -y "$deb"
mapfile -t files < <(dpkg -L seekless)
for f in /usr/bin/seekless /usr/share/man/man1/seekless.1.gz \
         /lib/systemd/system/seekless.service /lib/systemd/system/seekless.timer \
         /usr/lib/systemd/user/seekless.service /usr/lib/systemd/user/seekless.timer \
         /usr/share/doc/seekless/examples/seekless.conf /usr/share/doc/seekless/copyright; do
  [ -e "$f" ] || fail "the package did not install $f"
done
[ -d /var/lib/seekless ] || fail "no /var/lib/seekless for the system service's index"
grep -q '^ExecStart=/usr/bin/seekless scan --scheduled --config /etc/seekless.conf ' \
  /lib/systemd/system/seekless.service || fail "the system unit does not run /usr/bin/seekless"
if systemctl is-enabled seekless.timer >/dev/null 2>&1; then
  fail "the timer was enabled on installation"
fi
systemd-analyze verify /lib/systemd/system/seekless.service /lib/systemd/system/seekless.timer ||
  fail "systemd-analyze verify: the installed system units"
[ "$(command -v seekless)" = /usr/bin/seekless ] || fail "seekless on PATH is $(command -v seekless)"
version=$(seekless --version)
echo "$version"
# the package names the commit it was built from (tools/deb/build.sh)
want=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
case "$version" in
  "seekless "*"(commit $want)") ;;
  "seekless "*) [ -z "$want" ] || fail "seekless --version does not name the commit built ($want): $version" ;;
  *) fail "seekless --version: $version" ;;
esac
rc=0
seekless scan --db "$work/index.db" "$work/photos" || rc=$?
[ $rc -eq 0 ] || fail "the installed seekless's scan exited $rc"
n=$(seekless export --db "$work/index.db" | wc -l)
[ "$n" -eq 30 ] || fail "the scan recorded $n files, not 30"
# the system service's index place, as the unit uses it
seekless scan --db /var/lib/seekless/index.db "$work/photos" >/dev/null

DEBIAN_FRONTEND=noninteractive apt-get purge -y seekless
left=()
for f in "${files[@]}"; do
  [ -d "$f" ] || [ ! -e "$f" ] || left+=("$f")
done
for d in /var/lib/seekless /usr/share/doc/seekless; do
  [ ! -e "$d" ] || left+=("$d")
done
[ ${#left[@]} -eq 0 ] || fail "left behind after purge: ${left[*]}"
echo "deb test: built, lintian clean, installed, scanned, purged: nothing left"
