#!/usr/bin/env bash
# A benchmark set of real pictures, not mkcorpus's (issue 41):
#   tools/bench/realset.sh DEST
# DEST/exports/jpeg   real photographs as Debian's wallpaper packages ship
#                     them (lomiri-wallpapers-16.04 and -20.04,
#                     sway-backgrounds, ukui-wallpapers,
#                     plasma-workspace-wallpapers): 1-6K JPEGs, baseline and
#                     progressive, none with a camera thumbnail
# DEST/exports/png    the PNGs among them
# DEST/exports/webp   each PNG and JPEG re-encoded by cwebp -q 85
# DEST/exports/prog   each baseline JPEG re-encoded progressive (djpeg |
#                     cjpeg -progressive -quality 90, Debian's libjpeg-turbo)
# DEST/camera         the shared corpus's camera JPEGs (../shared/corpus/
#                     real, those exiftool gives a Make), as found: edited,
#                     resized, with or without a thumbnail
# DEST/camera2000     2,000 of those in turn, each padded after its end to a
#                     photo's size (log-normal, median 200 KB; the padding
#                     differs from file to file, so no two are one), in 40
#                     folders: a drive's worth of camera files, as issue 41
#                     measured them
# Needs apt-get (the packages are downloaded, not installed), webp and
# libjpeg-turbo-progs.  Prints what it made.
set -euo pipefail
dest=${1:?usage: realset.sh DEST}
here=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${SEEKLESS_CORPUS:-$here/../shared/corpus/real}
for t in cwebp djpeg cjpeg dpkg-deb apt-get; do
  command -v $t >/dev/null || { echo "realset: needs $t (apt-get install webp libjpeg-turbo-progs)" >&2; exit 2; }
done
mkdir -p "$dest/.debs" "$dest/.x" "$dest/exports/jpeg" "$dest/exports/png" "$dest/exports/webp" \
  "$dest/exports/prog" "$dest/camera" "$dest/camera2000"
cd "$dest/.debs"
pkgs=(lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 sway-backgrounds ukui-wallpapers
      plasma-workspace-wallpapers)
for p in "${pkgs[@]}"; do
  ls "$p"_*.deb >/dev/null 2>&1 && continue
  # the archive may list a version it no longer serves: then an older one
  if ! apt-get download "$p" >/dev/null 2>&1; then
    ok=0
    for v in $(apt-cache madison "$p" | awk '{print $3}'); do
      apt-get download "$p=$v" >/dev/null 2>&1 && { ok=1; break; }
    done
    [ $ok = 1 ] || { echo "realset: $p could not be downloaded (apt-get download $p)" >&2; exit 1; }
  fi
done
for d in *.deb; do dpkg-deb -x "$d" "$dest/.x"; done
cd "$dest"
n=0
while IFS= read -r -d '' f; do
  n=$((n + 1))
  b=$(printf '%03d-%s' $n "$(basename "$f" | tr ' ' '_')")
  case "${f,,}" in
    *.png) cp "$f" "exports/png/$b" ;;
    *) cp "$f" "exports/jpeg/$b" ;;
  esac
done < <(find .x -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) -size +200k -print0 | sort -z)
for f in exports/png/* exports/jpeg/*; do
  w="exports/webp/$(basename "${f%.*}").webp"
  [ -f "$w" ] || cwebp -quiet -q 85 "$f" -o "$w"
done
for f in exports/jpeg/*; do
  p="exports/prog/$(basename "$f")"
  [ -f "$p" ] && continue
  if file "$f" | grep -q baseline; then
    djpeg "$f" | cjpeg -progressive -quality 90 >"$p"
  fi
done
if [ -d "$corpus" ]; then
  python3 - "$corpus" camera <<'EOF'
import json, os, shutil, sys
corpus, out = sys.argv[1], sys.argv[2]
exp = json.load(open(os.path.join(corpus, "expected.json")))
for e in exp:
    name = os.path.basename(e.get("SourceFile", ""))
    if name.lower().endswith((".jpg", ".jpeg")) and e.get("EXIF:Make") and \
       os.path.exists(os.path.join(corpus, name)):
        shutil.copy(os.path.join(corpus, name), os.path.join(out, name))
EOF
fi
python3 - camera camera2000 <<'EOF'
import os, random, sys
src, out = sys.argv[1], sys.argv[2]
files = sorted(f for f in os.listdir(src) if open(os.path.join(src, f), "rb").read(2) == b"\xff\xd8")
rng = random.Random(2000)
for i in range(2000 if files else 0):
    name = files[i % len(files)]
    data = open(os.path.join(src, name), "rb").read()
    size = max(len(data), int(rng.lognormvariate(12.2, 0.6)))
    d = os.path.join(out, "%02d" % (i % 40))
    os.makedirs(d, exist_ok=True)
    pad = bytes((i * 131 + k) & 0xFF for k in range(4096))
    with open(os.path.join(d, "%04d-%s" % (i, name)), "wb") as f:
        f.write(data)
        n = size - len(data)
        while n > 0:
            f.write(pad[:n])
            n -= min(n, len(pad))
EOF
for d in exports/jpeg exports/png exports/webp exports/prog camera camera2000; do
  printf "%-14s %4d files %8.1f MB\n" "$d" "$(find "$d" -type f | wc -l)" \
    "$(du -sb "$d" | awk '{print $1 / 1e6}')"
done
