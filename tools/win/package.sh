#!/usr/bin/env bash
# The Windows packages, from a cross-built tree (tools/win/cross-build.sh
# runs this after the build):
#   BUILD/seekless-VERSION-x64.msi  per-machine installer (wixl, msitools):
#                                   Program Files\seekless, the service
#   BUILD/seekless-VERSION-x64.zip  the same files in one folder, portable
# Both hold seekless.exe, README.txt, NOTICE.txt (no licence chosen yet;
# the third-party notices), licenses\, docs\ (usage, windows, schema) and
# seekless.conf.example.  VERSION and the commit are the ones CMake gave
# --version (BUILD/seekless-version.txt).
# Usage: bash tools/win/package.sh [BUILD=build-win]
# docs/windows.md ("Packages") says what the installer does and why.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
out=$(realpath -m "${1:-build-win}")
prefix=$out/deps/prefix
fail() { echo "package: $*" >&2; exit 1; }

tools=(wixl msitools zip)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}" ||
    fail "apt-get install failed for: ${missing[*]}"
fi

[ -f "$out/seekless.exe" ] || fail "no $out/seekless.exe: build it first (tools/win/cross-build.sh --no-test)"
[ -f "$out/seekless-version.txt" ] || fail "no $out/seekless-version.txt: configure $out again"
{ read -r version; read -r commit || true; } < "$out/seekless-version.txt"
[ -n "$version" ] || fail "no version in $out/seekless-version.txt"
name=seekless-$version-x64
pkg=$out/pkg
stage=$pkg/$name

# --- the files, as both packages hold them
rm -rf "$pkg"
mkdir -p "$stage/docs" "$stage/licenses"
# without its DWARF debug information (no Windows debugger reads it): 2 MB
# instead of 4.8
x86_64-w64-mingw32-strip -o "$stage/seekless.exe" "$out/seekless.exe" ||
  fail "strip failed on $out/seekless.exe"
# CRLF: Notepad before Windows 10 1809 shows a file with bare LFs as one line
text() { sed 's/\r*$/\r/' "$1" > "$2"; }
text README.md "$stage/README.txt"
text dist/windows/NOTICE.txt "$stage/NOTICE.txt"
text dist/windows/seekless.conf "$stage/seekless.conf.example"
for d in usage windows schema; do
  text "docs/$d.md" "$stage/docs/$d.txt"
done
# what the static seekless.exe contains, each under its licence: the
# sources built (cross-build.sh keeps theirs) and the host's mingw-w64
# packages (Debian's copyright files)
lic() {
  [ -s "$1" ] || fail "no licence file $1 (for $2): run tools/win/cross-build.sh"
  text "$1" "$stage/licenses/$2.txt"
}
lic "$prefix/licenses/sqlite.txt" sqlite
lic "$prefix/licenses/libjpeg-turbo.txt" libjpeg-turbo
lic "$prefix/licenses/expat.txt" expat
lic /usr/share/doc/libz-mingw-w64-dev/copyright zlib
lic /usr/share/doc/libxxhash-dev/copyright xxhash
lic /usr/share/doc/mingw-w64-x86-64-dev/copyright mingw-w64
lic /usr/share/doc/gcc-mingw-w64-base/copyright gcc-runtime

# --- the portable zip: one folder, so unpacking never scatters files
rm -f "$out/$name.zip"
(cd "$pkg" && zip -q -X -r "$out/$name.zip" "$name")

# --- the MSI
wxs=$top/dist/windows/seekless.wxs
upgrade=$(sed -n 's/.*UpgradeCode="\([0-9A-Fa-f-]*\)".*/\1/p' "$wxs")
[ -n "$upgrade" ] || fail "no UpgradeCode in $wxs"
# one product code per version, the same at every build of it: a name-based
# UUID under the UpgradeCode
product=$(python3 -c 'import sys, uuid; print(str(uuid.uuid5(uuid.UUID(sys.argv[1]), "seekless " + sys.argv[2])).upper())' \
          "$upgrade" "$version")
rm -f "$out/$name.msi"
# wixl finds files only by relative paths (from where it runs)
log=$(mktemp)
if ! (cd "$pkg" && wixl -a x64 -D Version="$version" -D Commit="${commit:-unknown}" \
        -D ProductCode="$product" -D Stage="$name" -o "$out/$name.msi" "$wxs") >"$log" 2>&1; then
  sed 's/^/  | /' "$log" >&2
  rm -f "$log"
  fail "wixl failed on $wxs"
fi
rm -f "$log"
# What wixl 0.101 cannot write, added to its tables:
# - no Secure attribute: without ROOT and SCHEDULE in this list, Windows
#   drops them when given to an install that asks for elevation;
# - no Environment element: the program folder goes at the end of the
#   system PATH (`=-*`: set on install, taken out on removal), so
#   `seekless` works in any new prompt;
# - no rollback actions (Execute="rollback" is silently made immediate):
#   an install failing after the service was registered removes it again
#   (a first install only: a failed repair must not take it away), and an
#   uninstall failing after the service was removed registers it again.
#   Type 3410 = an EXE from the File table (18), rollback (0x100) in the
#   script (0x400), not impersonated (0x800), its exit status ignored (0x40).
sql=(
  "UPDATE \`Property\` SET \`Value\` = 'WIX_DOWNGRADE_DETECTED;WIX_UPGRADE_DETECTED;ROOT;SCHEDULE'
   WHERE \`Property\` = 'SecureCustomProperties'"
  "CREATE TABLE \`Environment\` (\`Environment\` CHAR(72) NOT NULL, \`Name\` CHAR(255) NOT NULL
   LOCALIZABLE, \`Value\` CHAR(255) LOCALIZABLE, \`Component_\` CHAR(72) NOT NULL
   PRIMARY KEY \`Environment\`)"
  "INSERT INTO \`Environment\` (\`Environment\`, \`Name\`, \`Value\`, \`Component_\`)
   VALUES ('Path', '=-*Path', '[~];[INSTALLDIR]', 'Program')"
  "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Sequence\`)
   VALUES ('RemoveEnvironmentStrings', 3300)"
  "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Sequence\`)
   VALUES ('WriteEnvironmentStrings', 5200)"
  "INSERT INTO \`CustomAction\` (\`Action\`, \`Type\`, \`Source\`, \`Target\`)
   VALUES ('ServiceInstallRollback', 3410, 'seekless.exe', 'service uninstall')"
  "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Condition\`, \`Sequence\`)
   VALUES ('ServiceInstallRollback', 'NOT Installed AND NOT (REMOVE~=\"ALL\")', 4099)"
  "INSERT INTO \`CustomAction\` (\`Action\`, \`Type\`, \`Source\`, \`Target\`)
   VALUES ('ServiceUninstallRollback', 3410, 'seekless.exe', 'service install --allow-no-root')"
  "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Condition\`, \`Sequence\`)
   VALUES ('ServiceUninstallRollback', 'REMOVE~=\"ALL\"', 3399)"
)
for x in "${sql[@]}"; do
  msibuild "$out/$name.msi" -q "$x" || fail "msibuild failed on $out/$name.msi: $x"
done
echo "package: $out/$name.msi ($(du -k "$out/$name.msi" | cut -f1) KiB), $out/$name.zip" \
     "($(du -k "$out/$name.zip" | cut -f1) KiB): seekless $version${commit:+, commit $commit}"
