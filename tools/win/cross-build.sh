#!/usr/bin/env bash
# Cross-build seekless for Windows (x86-64) with mingw-w64 and run its tests
# under Wine.  Everything lands in build-win/:
#   build-win/deps/     SQLite, libjpeg-turbo, zlib, xxHash built from
#                       Debian's source packages (built once, then reused)
#   build-win/          seekless.exe, mkcorpus.exe, the test programs
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
pkgs=(gcc-mingw-w64-x86-64 nasm wine64 wine tcl dpkg-dev cmake make)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
need_src=0
[ -f "$deps/.done" ] || need_src=1
if [ $need_src = 1 ] && ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # Same archive, suites and keyring as the binary entries.
  src=/etc/apt/sources.list.d/debian.sources
  [ -f "$src" ] || { echo "cross-build: no $src to derive a deb-src entry from" >&2; exit 1; }
  sed 's/^Types: deb$/Types: deb-src/' "$src" | $sudo tee /etc/apt/sources.list.d/seekless-deb-src.sources >/dev/null
  missing+=(__update__)
fi
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  real=()
  for p in "${missing[@]}"; do [ "$p" = __update__ ] || real+=("$p"); done
  [ ${#real[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${real[@]}"
fi

# --- dependencies, from Debian's sources, static, into $prefix
if [ ! -f "$deps/.done" ]; then
  t0=$(date +%s)
  rm -rf "$deps"
  mkdir -p "$deps/src" "$prefix/include" "$prefix/lib/pkgconfig"
  (cd "$deps/src" && apt-get source --download-only sqlite3 libjpeg-turbo zlib xxhash >/dev/null 2>&1)
  cd "$deps/src"
  tar xf sqlite3_*.orig.tar.xz
  tar xf libjpeg-turbo_*.orig.tar.gz
  tar xf zlib_*.orig.tar.*
  tar xf xxhash_*.orig.tar.gz

  # SQLite: the source tarball has no amalgamation; make it, then compile it.
  s=$(ls -d sqlite3-*/ 2>/dev/null | head -1); [ -n "$s" ] || s=$(ls -d sqlite*/ | head -1)
  (cd "$s" && ./configure --disable-tcl >/dev/null && make -j"$jobs" sqlite3.c >/dev/null)
  $cc -O2 -DSQLITE_THREADSAFE=1 -DSQLITE_DEFAULT_FOREIGN_KEYS=0 -DSQLITE_OMIT_LOAD_EXTENSION \
      -c "$s/sqlite3.c" -o "$deps/sqlite3.o"
  $host-ar rcs "$prefix/lib/libsqlite3.a" "$deps/sqlite3.o"
  cp "$s/sqlite3.h" "$prefix/include/"

  # zlib: plain sources, no configure needed.
  z=$(ls -d zlib-*/ | head -1)
  for c in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast \
           inflate inftrees trees uncompr zutil; do
    $cc -O2 -c "$z/$c.c" -o "$deps/z-$c.o"
  done
  $host-ar rcs "$prefix/lib/libz.a" "$deps"/z-*.o
  cp "$z/zlib.h" "$z/zconf.h" "$prefix/include/"

  # xxHash: one source file.
  x=$(ls -d xxHash-*/ 2>/dev/null | head -1); [ -n "$x" ] || x=$(ls -d xxhash-*/ | head -1)
  $cc -O2 -c "$x/xxhash.c" -o "$deps/xxhash.o"
  $host-ar rcs "$prefix/lib/libxxhash.a" "$deps/xxhash.o"
  cp "$x/xxhash.h" "$prefix/include/"

  # libjpeg-turbo: its own CMake build, static, SIMD through NASM.
  j=$(ls -d libjpeg-turbo-*/ | head -1)
  cmake -S "$j" -B "$deps/jpeg-build" -DCMAKE_TOOLCHAIN_FILE="$top/tools/win/mingw64.cmake" \
        -DCMAKE_INSTALL_PREFIX="$prefix" -DENABLE_SHARED=OFF -DENABLE_STATIC=ON \
        -DWITH_TURBOJPEG=OFF -DWITH_JPEG8=OFF >/dev/null
  cmake --build "$deps/jpeg-build" -j"$jobs" >/dev/null
  cmake --install "$deps/jpeg-build" >/dev/null

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
        -DSEEKLESS_WIN_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DSEEKLESS_HOST_MKCORPUS="$top/build/mkcorpus" >/dev/null
)
cmake --build "$out" -j"$jobs"
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
