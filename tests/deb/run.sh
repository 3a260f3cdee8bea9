#!/usr/bin/env bash
# The Debian package end to end, as root on a Debian 12 machine (CI): build
# it (tools/deb/build.sh, lintian included), then, in a clean Debian 12 root
# made with debootstrap (chroot), install it with apt-get, check the files
# are where Debian puts them, run the installed seekless (version, a small
# scan, the units verified by systemd), purge it and check that the root
# holds exactly the files it held before the installation.
#   bash tests/deb/run.sh [OUT=build-deb]
# The host only builds: nothing is installed on it but the build tools and
# debootstrap.  The chroot uses the host's own archive entries, so the
# package's dependencies come from where the build's did.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(realpath -m "${1:-build-deb}")
fail() { echo "deb test: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot)"

if ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap ||
    fail "apt-get install debootstrap failed (apt's reason above)"
fi
bash tools/deb/build.sh "$out"
deb=$(ls "$out"/seekless_*.deb)

if [ ! -x build/mkcorpus ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)" --target mkcorpus >/dev/null
fi

work=$(mktemp -d /var/tmp/seekless-deb.XXXXXX)
root=$work/root
cleanup() {
  for m in "$root/proc" "$root/sys" "$root/dev/pts" "$root/dev"; do
    mountpoint -q "$m" && umount -l "$m"
  done
  rm -rf "$work"
}
trap cleanup EXIT

# The mirror the host's own entries name (deb822 or one-line form), so the
# bootstrap reaches the archive the host was set up with.
mirror=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
         sed -n 's/^URIs: *\([^ ]*\).*/\1/p; s/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*/\2/p' |
         grep -v security | head -1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
echo "deb test: debootstrap bookworm (minbase + systemd) from $mirror"
# systemd is in the root so the units can be verified against it, as on
# any Debian system; its absence would not change what the package does.
if ! debootstrap --variant=minbase --include=systemd bookworm "$root" "$mirror" \
       >"$work/debootstrap.log" 2>&1; then
  tail -30 "$work/debootstrap.log" >&2
  [ -f "$root/debootstrap/debootstrap.log" ] && tail -30 "$root/debootstrap/debootstrap.log" >&2
  fail "debootstrap failed (its log above)"
fi
# the host's binary entries (the security suite too): the build linked
# against those versions
rm -f "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
  [ -f "$f" ] || continue
  case "$f" in *seekless*) continue ;; esac
  if [ "${f##*.}" = sources ]; then
    awk 'BEGIN{RS=""; ORS="\n\n"} /(^|\n)Types: deb(\n|$)/' "$f" >"$root/etc/apt/sources.list.d/${f##*/}"
  else
    grep '^deb ' "$f" >"$root/etc/apt/sources.list.d/host.list" || true
  fi
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
              DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -q || fail "apt-get update in the chroot failed (apt's reason above)"

# Every file of the root but what apt and dpkg keep about themselves.
snapshot() {
  (cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp \
       -o -path ./run -o -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./var/cache \
       -o -path ./var/log -o -path ./var/tmp \) -prune -o -print | LC_ALL=C sort)
}
# apt-get install also brings the package's libraries; purge --autoremove
# takes them away again, so before and after compare whole.
snapshot >"$work/before"

cp "$deb" "$root/tmp/"
in_root apt-get install -y -q "/tmp/${deb##*/}" || fail "apt-get install of the package failed"
mapfile -t files < <(in_root dpkg -L seekless)
for f in /usr/bin/seekless /usr/share/man/man1/seekless.1.gz \
         /lib/systemd/system/seekless.service /lib/systemd/system/seekless.timer \
         /usr/lib/systemd/user/seekless.service /usr/lib/systemd/user/seekless.timer \
         /usr/share/doc/seekless/examples/seekless.conf /usr/share/doc/seekless/copyright; do
  [ -e "$root$f" ] || fail "the package did not install $f"
done
[ -d "$root/var/lib/seekless" ] || fail "no /var/lib/seekless for the system service's index"
grep -q '^ExecStart=/usr/bin/seekless scan --scheduled --config /etc/seekless.conf ' \
  "$root/lib/systemd/system/seekless.service" || fail "the system unit does not run /usr/bin/seekless"
[ ! -e "$root/etc/systemd/system/timers.target.wants/seekless.timer" ] ||
  fail "the timer was enabled on installation"
in_root systemd-analyze verify /lib/systemd/system/seekless.service /lib/systemd/system/seekless.timer ||
  fail "systemd-analyze verify: the installed system units"
[ "$(in_root sh -c 'command -v seekless')" = /usr/bin/seekless ] || fail "seekless is not on PATH"
version=$(in_root seekless --version)
echo "$version"
# the package names the commit it was built from (tools/deb/build.sh)
want=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
case "$version" in
  "seekless "*"(commit $want)") ;;
  "seekless "*) [ -z "$want" ] || fail "seekless --version does not name the commit built ($want): $version" ;;
  *) fail "seekless --version: $version" ;;
esac

# a small photo tree, scanned by the installed seekless; the count and each
# file's content hash checked against the tree and xxh128sum
build/mkcorpus --files 30 --median 20k --seed 5 --no-sync "$root/root/photos" >/dev/null
rc=0
in_root seekless scan --db /root/index.db /root/photos || rc=$?
[ $rc -eq 0 ] || fail "the installed seekless's scan exited $rc"
python3 - "$root" <<'EOF' || fail "the chroot's index does not match the tree"
import os, sqlite3, subprocess, sys
root = sys.argv[1]
photos = os.path.join(root, "root/photos")
want = {}
for d, _, names in os.walk(photos):
    for n in names:
        p = os.path.join(d, n)
        h = subprocess.run(["xxh128sum", p], capture_output=True, text=True, check=True)
        want["/root/photos/" + os.path.relpath(p, photos)] = h.stdout.split()[0]
db = sqlite3.connect("file:" + os.path.join(root, "root/index.db") + "?mode=ro", uri=True)
got = {}
for path, h in db.execute("SELECT path, content_hash FROM files WHERE deleted_at IS NULL"):
    got[path] = h or ""
if got != want:
    missing = sorted(set(want) - set(got))[:5]
    extra = sorted(set(got) - set(want))[:5]
    wrong = sorted(p for p in set(got) & set(want) if got[p] != want[p])[:5]
    sys.exit(f"index {len(got)} files, tree {len(want)}; missing {missing} extra {extra} hash differs {wrong}")
print(f"deb test: {len(got)} files indexed, each hash equal to xxh128sum's")
EOF
n=$(in_root seekless export --db /root/index.db | wc -l)
[ "$n" -eq 30 ] || fail "seekless export listed $n files, not 30"
# the system service's index place, as the unit uses it
in_root seekless scan --db /var/lib/seekless/index.db /root/photos >/dev/null ||
  fail "a scan into /var/lib/seekless failed"
# what the test itself made (the index's lock file stays beside an index)
rm -rf "$root/root/photos" "$root/root/index.db" "$root/root/index.db.lock"

in_root apt-get purge -y -q --autoremove seekless || fail "apt-get purge failed"
snapshot >"$work/after"
if ! diff -u "$work/before" "$work/after" >"$work/diff"; then
  cat "$work/diff" >&2
  fail "the root after purge differs from the root before installation (above)"
fi
left=()
for f in "${files[@]}"; do
  [ -d "$root$f" ] || [ ! -e "$root$f" ] || left+=("$f")
done
[ ${#left[@]} -eq 0 ] || fail "left behind after purge: ${left[*]}"
echo "deb test: built, lintian clean; in a debootstrap root installed, scanned, purged: nothing left"
