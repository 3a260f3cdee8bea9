"""dupes --near on real files, with Debian's tools making the copies and
pulling the pictures out (exiftool, libjpeg-turbo's djpeg/cjpeg/jpegtran):

- a RAW file (the shared corpus's Panasonic RW2, Canon CR2 and DNG, into
  which exiftool writes a JPEG preview: the photo at half size, as a
  camera renders it) and the JPEG beside it (the photo itself) are grouped;
  no two RAWs are; so are a Canon CR3 with its own preview and a JPEG made
  from what exiftool pulls out of it;
- a photo whose EXIF orientation says "turn it", and its copy without any
  EXIF (jpegtran -copy none: shown otherwise), are grouped;
- a HEIC and the JPEG exported from it (heif-convert, libheif's own tool)
  are grouped, for three of the corpus's HEICs (one stored turned, whose
  export is turned and keeps the tag);
- a PNG (netpbm's pnmtopng) and a WebP (libwebp's cwebp, one of them
  made smaller on the way) of a JPEG photo are grouped with it, for three
  photos; different photos' copies are not;
- a stale thumbnail: a camera photo turned into its negative by an editor
  that copied the old EXIF back, thumbnail and all (exiftool
  -TagsFromFile), and stamped its ModifyDate: it is hashed from its image,
  and is not grouped with the original; the original is hashed from its
  thumbnail.
"""
import itertools
import json
import os
import shutil
import subprocess

from lib import check, done, run, skip, tempdir

corpus = os.environ.get("SEEKLESS_CORPUS")
if not corpus or not os.path.isdir(corpus):
    skip("shared corpus not found at %s" % corpus)
for tool in ("exiftool", "djpeg", "cjpeg", "jpegtran", "heif-convert", "pnmtopng", "cwebp"):
    if shutil.which(tool) is None:
        skip("%s not installed (libimage-exiftool-perl, libjpeg-turbo-progs, libheif-examples, "
             "netpbm, webp)" % tool)


def sh(cmd):
    p = subprocess.run(["sh", "-c", cmd], capture_output=True)
    check(p.returncode == 0, "%s: %s" % (cmd, p.stderr[-300:]))
    return p.stdout


def preview_of(raw, out):
    """The biggest JPEG exiftool finds in raw, written to out."""
    best = b""
    for tag in ("JpgFromRaw", "PreviewImage", "OtherImage", "ThumbnailImage"):
        p = subprocess.run(["exiftool", "-b", "-" + tag, raw], capture_output=True)
        if p.stdout[:2] == b"\xff\xd8" and len(p.stdout) > len(best):
            best = p.stdout
    with open(out, "wb") as f:
        f.write(best)
    return len(best) > 0


with tempdir("near", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    os.makedirs(root)
    # RAW files whose preview exiftool writes (the corpus's are exiftool's
    # own test files, with 8x8 placeholders): the camera's rendering of a
    # photo at half size in the RAW, the photo itself beside it
    raws = [("exiftool__Panasonic.rw2", "JpgFromRaw", "exifr__door-knocker.jpg"),
            ("exiftool__CanonRaw.cr2", "PreviewImage", "metadata-extractor-images__jpg__Nikon D5000.jpg"),
            ("exiftool__DNG.dng", "PreviewImage", "exiv2__FurnaceCreekInn.jpg")]
    pairs = []
    for name, tag, photo in raws:
        raw = os.path.join(root, name)
        shutil.copy(os.path.join(corpus, name), raw)
        os.chmod(raw, 0o644)
        prev = os.path.join(work, name + ".preview.jpg")
        sh("djpeg -scale 1/2 '%s' | cjpeg -quality 85 > '%s'" % (os.path.join(corpus, photo), prev))
        sh("exiftool -q -overwrite_original '-%s<=%s' '%s'" % (tag, prev, raw))
        check(preview_of(raw, os.path.join(work, "check.jpg")) and
              os.path.getsize(os.path.join(work, "check.jpg")) == os.path.getsize(prev),
              "exiftool wrote the preview into " + name)
        jpg = os.path.join(root, os.path.splitext(name)[0] + ".JPG")
        shutil.copy(os.path.join(corpus, photo), jpg)
        pairs.append((raw, jpg))

    # a Canon CR3 (EOS R6) carries its own 1620x1080 preview (PRVW): the
    # JPEG beside it is that preview as exiftool pulls it out, made half
    # size and re-saved
    cr3 = os.path.join(root, "canon-r6.cr3")
    shutil.copy(os.path.join(corpus, "nom-exif__canon-r6.cr3"), cr3)
    os.chmod(cr3, 0o644)
    cr3_prev = os.path.join(work, "cr3-preview.jpg")
    check(preview_of(cr3, cr3_prev), "exiftool finds the CR3's preview")
    cr3_jpg = os.path.join(root, "canon-r6.JPG")
    sh("djpeg -scale 1/2 '%s' | cjpeg -quality 85 > '%s'" % (cr3_prev, cr3_jpg))
    pairs.append((cr3, cr3_jpg))

    heics = []
    for name in ("immich-test-assets__formats__heic__IMG_2682.heic",
                 "libheif__examples__example.heic", "file-type__fixture-heic.heic"):
        heic = os.path.join(root, name)
        shutil.copy(os.path.join(corpus, name), heic)
        os.chmod(heic, 0o644)
        exported = os.path.join(work, "export-" + name + ".jpg")
        sh("heif-convert -q 90 '%s' '%s'" % (heic, exported))
        jpg = os.path.join(root, os.path.splitext(name)[0] + "-export.jpg")
        # heif-convert writes NAME-1.jpg, NAME-2.jpg... for several images
        made = exported if os.path.exists(exported) else exported[:-4] + "-1.jpg"
        shutil.copy(made, jpg)
        heics.append((heic, jpg))

    # web and editor copies of the RAWs' JPEGs: PNG at full size, WebP at
    # full size for the first two and at 60% for the third
    copies = []
    for i, (_, jpg) in enumerate(pairs[:3]):
        png = os.path.splitext(jpg)[0] + "-copy.png"
        webp = os.path.splitext(jpg)[0] + "-copy.webp"
        sh("djpeg '%s' | pnmtopng > '%s'" % (jpg, png))
        w = int(sh("exiftool -s3 -ImageWidth '%s'" % jpg).strip())
        sh("cwebp -quiet -q 80 %s '%s' -o '%s'" %
           ("-resize %d 0" % (w * 6 // 10) if i == 2 else "", jpg, webp))
        copies.append((jpg, png, webp))

    turned = os.path.join(root, "turned.jpg")
    shutil.copy(os.path.join(corpus, "exif-samples__jpg__orientation__landscape_6.jpg"), turned)
    stripped = os.path.join(root, "turned-stripped.jpg")
    sh("jpegtran -copy none '%s' > '%s'" % (turned, stripped))

    cam = os.path.join(root, "camera.jpg")
    shutil.copy(os.path.join(corpus, "metadata-extractor-images__jpg__Kodak DX4330.jpg"), cam)
    edited = os.path.join(root, "camera-edited.jpg")
    ppm = os.path.join(work, "cam.ppm")
    sh("djpeg '%s' > '%s'" % (cam, ppm))
    with open(ppm, "rb") as f:
        data = f.read()
    # a binary PPM: "P6\nW H\n255\n" then the samples; negate the samples
    head = data.split(b"\n", 3)
    body = bytes(255 - b for b in head[3])
    with open(ppm, "wb") as f:
        f.write(b"\n".join(head[:3]) + b"\n" + body)
    sh("cjpeg -quality 90 '%s' > '%s'" % (ppm, edited))
    sh("exiftool -q -overwrite_original -TagsFromFile '%s' -all:all -ThumbnailImage "
       "'-ModifyDate=2025:01:02 03:04:05' '%s'" % (cam, edited))
    check(subprocess.run(["exiftool", "-b", "-ThumbnailImage", edited],
                         capture_output=True).stdout[:2] == b"\xff\xd8",
          "the edited copy carries the old thumbnail")

    db = os.path.join(work, "i.db")
    # --phash-now: every hash in this scan, whatever the page cache holds
    # (by default one the disk outruns is left for the next scan: test_pending)
    rc, out, err = run("scan", "--phash-now", "--db", db, root)
    check(rc in (0, 1), "scan: %d %s" % (rc, err[-300:]))
    ext = {r["path"]: r for r in (json.loads(l) for l in
                                   run("export", "--db", db, "--extended")[1].splitlines())}
    for raw, jpg in pairs:
        check(ext[raw]["phash_src"] == "preview", "%s hashed from its preview: %s" %
              (os.path.basename(raw), ext[raw]["phash_src"]))
    for heic, jpg in heics:
        check(ext[heic]["phash_src"] in ("heif-thumbnail", "image"), "%s hashed: %s" %
              (os.path.basename(heic), ext[heic]["phash_src"]))
    for jpg, png, webp in copies:
        for c in (png, webp):
            check(ext[c]["phash_src"] == "image", "%s hashed from its image: %s" %
                  (os.path.basename(c), ext[c]["phash_src"]))
    check(ext[cam]["phash_src"] == "exif-thumbnail", "the camera original from its thumbnail: %s"
          % ext[cam]["phash_src"])
    check(ext[edited]["phash_src"] == "image", "the edited copy from its image, not the stale "
          "thumbnail: %s" % ext[edited]["phash_src"])

    rc, out, err = run("dupes", "--db", db, "--near", "--json", check_rc=0)
    groups = [set(json.loads(l)["paths"]) for l in out.splitlines()]

    def together(a, b):
        return any(a in g and b in g for g in groups)

    for raw, jpg in pairs:
        check(together(raw, jpg), "RAW and its JPEG grouped: " + os.path.basename(raw))
    for (r1, _), (r2, _) in itertools.combinations(pairs, 2):
        check(not together(r1, r2), "different RAWs apart: %s, %s" % (r1, r2))
    for heic, jpg in heics:
        check(together(heic, jpg), "HEIC and its JPEG export grouped: " + os.path.basename(heic))
    check(not together(heics[0][0], heics[1][0]), "different HEICs apart")
    for jpg, png, webp in copies:
        check(together(jpg, png), "a PNG copy grouped with its JPEG: " + os.path.basename(png))
        check(together(jpg, webp), "a WebP copy grouped with its JPEG: " + os.path.basename(webp))
    for (_, p1, w1), (_, p2, w2) in ((copies[0], copies[1]), (copies[0], copies[2]),
                                     (copies[1], copies[2])):
        check(not together(p1, w2) and not together(w1, p2) and not together(p1, p2),
              "copies of different photos apart: %s, %s" % (p1, p2))
    check(together(turned, stripped), "a copy that lost its orientation tag is the same photo")
    check(not together(cam, edited), "the negative is another picture")
done()
