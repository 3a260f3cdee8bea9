#!/usr/bin/env bash
# Install what seekless needs to build and test on Debian 12 (bookworm).
# Skips apt when everything is already there.
set -euo pipefail
pkgs=(build-essential cmake pkg-config
      libjpeg62-turbo-dev libturbojpeg0-dev libsqlite3-dev libxxhash-dev zlib1g-dev libfuse3-dev fuse3
      python3 xxhash e2fsprogs xfsprogs btrfs-progs util-linux bindfs systemd
      libheif-dev libimage-exiftool-perl libarchive-zip-perl libjpeg-turbo-progs libheif-examples
      libpng-dev libwebp-dev webp netpbm ffmpeg libexpat1-dev strace ntfs-3g mergerfs fdisk
      chromium fonts-dejavu-core)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# apt's own messages stay visible; a failure says which packages it was for
$sudo apt-get update -qq || { echo "deps.sh: apt-get update failed" >&2; exit 1; }
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
     "${missing[@]}"; then
  echo "deps.sh: apt-get install failed for: ${missing[*]}" >&2
  exit 1
fi
