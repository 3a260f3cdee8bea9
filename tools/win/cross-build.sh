#!/usr/bin/env bash
# Cross-build seekless for Windows (x86-64) with mingw-w64 and run its tests
# under Wine.  Everything lands in build-win/:
#   build-win/deps/     SQLite, libjpeg-turbo, expat, zlib, xxHash built from
#                       Debian's source packages (built once, then reused)
#   build-win/          seekless.exe, mkcorpus.exe, the test programs, and
#                       the packages: seekless-VERSION-x64.msi and .zip
#                       (tools/win/package.sh)
#   build-win/wineprefix  the Wine prefix the tests run in
# Usage: bash tools/win/cross-build.sh [--no-test]
# docs/windows.md explains what is (and is not) verified this way.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
out=$top/build-win
deps=$out/deps
prefix=$deps/prefix
host=x86_64-w64-mingw32
cc=$host-gcc-posix
jobs=$(nproc)
run_tests=1
[ "${1:-}" = "--no-test" ] && run_tests=0

# --- tools: the cross compiler, NASM for libjpeg-turbo's SIMD, Wine, tcl for
# SQLite's amalgamation, and a deb-src entry to fetch the dependencies from.
# zlib comes built from Debian's own mingw package (libz-mingw-w64-dev) and
# xxHash from the host's header (libxxhash-dev: the whole implementation is
# in xxhash.h), so only SQLite, libjpeg-turbo and expat need source downloads.
# wixl, msitools and zip make the packages (tools/win/package.sh).
pkgs=(gcc-mingw-w64-x86-64 nasm wine64 wine tcl dpkg-dev cmake make libz-mingw-w64-dev libxxhash-dev
      wixl msitools zip)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
need_src=0
# a dependency added since the last build (expat), or the licences the
# packages ship (kept since), means building them again
[ -f "$deps/.done" ] && [ -f "$prefix/lib/libexpat.a" ] && [ -f "$prefix/licenses/expat.txt" ] ||
  rm -f "$deps/.done"
[ -f "$deps/.done" ] || need_src=1
if [ $need_src = 1 ] && ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # Same archive, suites and keyring as the binary entries.
  src=/etc/apt/sources.list.d/debian.sources
  [ -f "$src" ] || { echo "cross-build: no $src to derive a deb-src entry from" >&2; exit 1; }
  sed 's/^Types: deb$/Types: deb-src/' "$src" | $sudo tee /etc/apt/sources.list.d/seekless-deb-src.sources >/dev/null
  missing+=(__update__)
fi
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update || { echo "cross-build: apt-get update failed" >&2; exit 1; }
  real=()
  for p in "${missing[@]}"; do [ "$p" = __update__ ] || real+=("$p"); done
  if [ ${#real[@]} -gt 0 ] &&
     ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${real[@]}"; then
    echo "cross-build: apt-get install failed for: ${real[*]}" >&2
    exit 1
  fi
fi

# --- dependencies, from Debian's sources, static, into $prefix

# fetch_source PKG: download PKG's source package into the current folder,
# newest version first.  The archive may list a version whose files it no
# longer serves (a security update whose source went 404): then the next
# older one is tried.  Says which version it used; fails naming PKG, with
# apt's own messages, when none downloads.
fetch_source() {
  local pkg=$1 v log tried=()
  mapfile -t versions < <(apt-cache showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' |
                          sort -u | sort -r -V)
  # sort -V is close to Debian's order but not equal (epochs, ~): settle
  # the order with dpkg itself, newest first
  local sorted=() x i j
  for x in "${versions[@]}"; do
    i=0
    while [ $i -lt ${#sorted[@]} ] && dpkg --compare-versions "${sorted[$i]}" gt "$x"; do
      i=$((i + 1))
    done
    sorted=("${sorted[@]:0:$i}" "$x" "${sorted[@]:$i}")
  done
  if [ ${#sorted[@]} -eq 0 ]; then
    echo "cross-build: apt-cache showsrc lists no source version of $pkg (is deb-src configured?)" >&2
    return 1
  fi
  log=$(mktemp)
  mkdir -p "$pkg"
  for v in "${sorted[@]}"; do
    # each try in an empty folder: files left by a failed try must not be
    # mistaken for this version's
    rm -f "$pkg"/*
    if (cd "$pkg" && apt-get source --download-only "$pkg=$v") >"$log" 2>&1; then
      echo "cross-build: $pkg source $v${tried:+ (not downloadable: ${tried[*]})}"
      rm -f "$log"
      return 0
    fi
    tried+=("$v")
    echo "cross-build: $pkg source $v did not download:" >&2
    sed 's/^/  | /' "$log" >&2
  done
  rm -f "$log"
  echo "cross-build: no source version of $pkg could be downloaded (tried ${tried[*]})" >&2
  return 1
}

# step NAME CMD...: run a build step with its output in a log, shown (the
# last 60 lines) when it fails, so a failure always says what and why.
step() {
  local name=$1 log
  shift
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    echo "cross-build: $name failed:" >&2
    tail -n 60 "$log" | sed 's/^/  | /' >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# untar PATTERN: extract the one archive matching PATTERN, or say why not.
untar() {
  local f
  f=$(ls $1 2>/dev/null | head -1)
  if [ -z "$f" ]; then
    echo "cross-build: no $1 after the download (found: $(ls -R | tr '\n' ' '))" >&2
    return 1
  fi
  tar xf "$f"
}

if [ ! -f "$deps/.done" ]; then
  t0=$(date +%s)
  rm -rf "$deps"
  mkdir -p "$deps/src" "$prefix/include" "$prefix/lib/pkgconfig"
  cd "$deps/src"
  fetch_source sqlite3
  fetch_source libjpeg-turbo
  fetch_source expat
  untar 'sqlite3/sqlite3_*.orig.tar.*'
  untar 'libjpeg-turbo/libjpeg-turbo_*.orig.tar.*'
  untar 'expat/expat_*.orig.tar.*'

  # SQLite: the source tarball has no amalgamation; make it, then compile it.
  s=$(ls -d sqlite3-*/ 2>/dev/null | head -1); [ -n "$s" ] || s=$(ls -d sqlite*/ | head -1)
  (cd "$s" && step "SQLite configure" ./configure --disable-tcl &&
     step "SQLite amalgamation" make -j"$jobs" sqlite3.c)
  $cc -O2 -DSQLITE_THREADSAFE=1 -DSQLITE_DEFAULT_FOREIGN_KEYS=0 -DSQLITE_OMIT_LOAD_EXTENSION \
      -c "$s/sqlite3.c" -o "$deps/sqlite3.o"
  $host-ar rcs "$prefix/lib/libsqlite3.a" "$deps/sqlite3.o"
  cp "$s/sqlite3.h" "$prefix/include/"

  # zlib: Debian's mingw-w64 build, static library and headers.
  zdir=/usr/$host
  for f in "$zdir/lib/libz.a" "$zdir/include/zlib.h" "$zdir/include/zconf.h"; do
    [ -f "$f" ] || { echo "cross-build: $f missing (libz-mingw-w64-dev)" >&2; exit 1; }
  done
  cp "$zdir/lib/libz.a" "$prefix/lib/"
  cp "$zdir/include/zlib.h" "$zdir/include/zconf.h" "$prefix/include/"

  # xxHash: the host's xxhash.h holds the implementation; compile it once.
  [ -f /usr/include/xxhash.h ] || { echo "cross-build: /usr/include/xxhash.h missing (libxxhash-dev)" >&2; exit 1; }
  cp /usr/include/xxhash.h "$prefix/include/"
  printf '#define XXH_STATIC_LINKING_ONLY\n#define XXH_IMPLEMENTATION\n#include "xxhash.h"\n' > "$deps/xxhash.c"
  $cc -O2 -I"$prefix/include" -c "$deps/xxhash.c" -o "$deps/xxhash.o"
  $host-ar rcs "$prefix/lib/libxxhash.a" "$deps/xxhash.o"

  # libjpeg-turbo: its own CMake build, static, SIMD through NASM.
  j=$(ls -d libjpeg-turbo-*/ | head -1)
  step "libjpeg-turbo configure" \
    cmake -S "$j" -B "$deps/jpeg-build" -DCMAKE_TOOLCHAIN_FILE="$top/tools/win/mingw64.cmake" \
          -DCMAKE_INSTALL_PREFIX="$prefix" -DENABLE_SHARED=OFF -DENABLE_STATIC=ON \
          -DWITH_TURBOJPEG=OFF -DWITH_JPEG8=OFF
  step "libjpeg-turbo build" cmake --build "$deps/jpeg-build" -j"$jobs"
  step "libjpeg-turbo install" cmake --install "$deps/jpeg-build"

  # expat: its own CMake build, the static library only.
  # Debian's orig tarball is the upstream tag's: libexpat-R_*/expat/
  x=$( (ls -d libexpat-*/expat/ expat-*/ 2>/dev/null || true) | head -1)
  [ -n "$x" ] || { echo "cross-build: no expat source folder after the download (found: $(ls))" >&2; exit 1; }
  step "expat configure" \
    cmake -S "$x" -B "$deps/expat-build" -DCMAKE_TOOLCHAIN_FILE="$top/tools/win/mingw64.cmake" \
          -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release -DEXPAT_SHARED_LIBS=OFF \
          -DEXPAT_BUILD_TOOLS=OFF -DEXPAT_BUILD_EXAMPLES=OFF -DEXPAT_BUILD_TESTS=OFF \
          -DEXPAT_BUILD_DOCS=OFF -DEXPAT_BUILD_FUZZERS=OFF -DEXPAT_BUILD_PKGCONFIG=OFF
  step "expat build" cmake --build "$deps/expat-build" -j"$jobs"
  step "expat install" cmake --install "$deps/expat-build"
  # some expat versions name the MinGW library libexpatMD.a or libexpat.dll.a
  if [ ! -f "$prefix/lib/libexpat.a" ]; then
    a=$(ls "$prefix"/lib/libexpat*.a 2>/dev/null | grep -v dll | head -1)
    [ -n "$a" ] || { echo "cross-build: expat installed no static library (found: $(ls "$prefix/lib"))" >&2; exit 1; }
    cp "$a" "$prefix/lib/libexpat.a"
  fi
  printf 'prefix=%s\nName: expat\nDescription: expat\nVersion: 0\nCflags: -I${prefix}/include -DXML_STATIC\nLibs: -L${prefix}/lib -lexpat\n' \
    "$prefix" > "$prefix/lib/pkgconfig/expat.pc"

  # The licences of what is linked in, from the sources built, for the
  # packages (tools/win/package.sh adds those of the host's mingw-w64,
  # zlib and xxHash packages).
  mkdir -p "$prefix/licenses"
  cp "$s/LICENSE.md" "$prefix/licenses/sqlite.txt"
  cat "$j/LICENSE.md" "$j/README.ijg" > "$prefix/licenses/libjpeg-turbo.txt"
  cp "$x/COPYING" "$prefix/licenses/expat.txt"

  # pkg-config files, so the main CMakeLists.txt finds them as on Linux.
  for m in sqlite3:sqlite3 libxxhash:xxhash zlib:z; do
    name=${m%%:*}; lib=${m##*:}
    printf 'prefix=%s\nName: %s\nDescription: %s\nVersion: 0\nCflags: -I${prefix}/include\nLibs: -L${prefix}/lib -l%s\n' \
      "$prefix" "$name" "$name" "$lib" > "$prefix/lib/pkgconfig/$name.pc"
  done
  cd "$top"
  touch "$deps/.done"
  echo "cross-build: dependencies built in $(( $(date +%s) - t0 )) s"
fi

# --- seekless itself
(
  export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=
  cmake -S . -B "$out" -DCMAKE_TOOLCHAIN_FILE="$top/tools/win/mingw64.cmake" \
        -DSEEKLESS_WIN_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEEKLESS_WERROR=ON \
        -DSEEKLESS_HOST_MKCORPUS="$top/build/mkcorpus" >/dev/null
)
cmake --build "$out" -j"$jobs"
# the MSI and the portable zip, which test_win_install installs and unpacks
bash tools/win/package.sh "$out"
[ $run_tests = 1 ] || exit 0

# The Windows tests generate their photo trees with the host's mkcorpus.
if [ ! -x build/mkcorpus ]; then
  bash tools/deps.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$jobs" --target mkcorpus >/dev/null
fi

# --- tests under Wine: one prefix, one wineserver kept alive for the run
export WINEPREFIX=$out/wineprefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
export SEEKLESS_WINE=1
# this script installs all the Windows tests need (Wine, the packages'
# tools, the corpus generator): a test that finds something missing fails
# instead of skipping (SEEKLESS_REQUIRE_ALL=0 to let it skip)
export SEEKLESS_REQUIRE_ALL=${SEEKLESS_REQUIRE_ALL:-1}
stop_wine() { wineserver -k 2>/dev/null || true; wineserver -w 2>/dev/null || true; }
stop_wine
# A fresh prefix each run (about 5 s): a service left registered by an
# interrupted run would be auto-started at boot and keep Wine's service
# database locked (ERROR_SERVICE_DATABASE_LOCKED) for the whole run.
rm -rf "$WINEPREFIX"
mkdir -p "$WINEPREFIX"
wineserver -p   # persistent: services live only as long as the wineserver
trap 'wine sc delete seekless >/dev/null 2>&1; stop_wine' EXIT
# plain wineboot: "-i" starts a second services.exe, and services then
# connect to the wrong one (ERROR_SERVICE_REQUEST_TIMEOUT)
wine wineboot >/dev/null 2>&1 || true
status=0
ctest --test-dir "$out" --output-on-failure -j"$jobs" || status=$?
wine sc delete seekless >/dev/null 2>&1 || true
trap - EXIT
stop_wine
exit $status
