"""PNG in every shape a PNG comes in hashes as the grey picture it shows.

The pictures are drawn here, encoded by netpbm's pnmtopng (an encoder that
is not ours), and scanned.  For each, the grey picture a viewer shows is
computed here from the drawn samples, by the rule raster.h states (integer
BT.601 luma of the stored values, transparency composited on white) and
written as an 8-bit grey PNG, whose hash the unit test checks against the
grid directly.  Every shape must hash exactly as its grey picture:
RGB, RGB at 16 bits, RGB interlaced (Adam7), RGBA, grey with alpha, a
palette, grey at 1 bit and at 16 bits.  A PNG cut short gets no hash
and a warning that says why (its metadata is still recorded).
"""
import os
import shutil
import subprocess

from lib import check, db_rows, done, run, skip, tempdir

if shutil.which("pnmtopng") is None:
    skip("pnmtopng not installed (netpbm)")

W, H = 193, 121


def luma(r, g, b):
    return (77 * r + 150 * g + 29 * b + 128) >> 8


def over_white(v, a):
    return round((v * a + 255 * (255 - a)) / 255)


def pnm(path, magic, maxval, rows):
    """rows: lists of samples (already interleaved)."""
    big = maxval > 255
    with open(path, "wb") as f:
        f.write(b"%s\n%d %d\n%d\n" % (magic, W, H, maxval))
        for row in rows:
            if big:
                f.write(b"".join(v.to_bytes(2, "big") for v in row))
            else:
                f.write(bytes(row))


def pbm(path, bits):
    with open(path, "wb") as f:
        f.write(b"P4\n%d %d\n" % (W, H))
        for row in bits:
            out = bytearray((W + 7) // 8)
            for x, b in enumerate(row):
                if b:
                    out[x // 8] |= 0x80 >> (x % 8)
            f.write(bytes(out))


def to_png(src, dst, *opts):
    p = subprocess.run(["pnmtopng", *opts, src], capture_output=True)
    check(p.returncode == 0 and p.stdout[:8] == b"\x89PNG\r\n\x1a\n",
          "pnmtopng %s %s: %s" % (" ".join(opts), src, p.stderr[-200:]))
    with open(dst, "wb") as f:
        f.write(p.stdout)
    return p.stdout


def png_header(data):
    """(bit depth, colour type, interlace) from IHDR."""
    return data[24], data[25], data[28]


# a photo-like picture: smooth gradients, an edge, some texture
def rgb_at(x, y):
    r = (x * 255) // (W - 1)
    g = (y * 255) // (H - 1)
    b = 200 if (x - 90) ** 2 + (y - 60) ** 2 < 900 else (x * y) % 97
    return r, g, b


def alpha_at(x, y):
    return min(255, (x + y) * 255 // (W + H - 40)) if x < 150 else 255


with tempdir("rasters", base="/dev/shm") as work:
    src = os.path.join(work, "src")
    root = os.path.join(work, "photos")
    os.makedirs(src)
    os.makedirs(root)
    px = [[rgb_at(x, y) for x in range(W)] for y in range(H)]
    alpha = [[alpha_at(x, y) for x in range(W)] for y in range(H)]
    greys = [[luma(*px[y][x]) for x in range(W)] for y in range(H)]

    def P(name):
        return os.path.join(src, name)

    pnm(P("rgb.ppm"), b"P6", 255, [[c for p in row for c in p] for row in px])
    # 16 bits whose low bytes differ (pnmtopng keeps 8 bits where they would
    # not); libpng keeps the high byte (png_set_strip_16)
    pnm(P("rgb16.ppm"), b"P6", 65535, [[c * 256 + (x * 37 + k) % 256 for x, p in enumerate(row)
                                        for k, c in enumerate(p)] for row in px])
    pnm(P("alpha.pgm"), b"P5", 255, alpha)
    pnm(P("grey.pgm"), b"P5", 255, greys)
    pnm(P("grey16.pgm"), b"P5", 65535, [[v * 256 + (x * 91) % 256 for x, v in enumerate(row)]
                                         for row in greys])
    # 6 levels a channel: at most 216 colours, which pnmtopng stores as a palette
    few = [[tuple(c // 51 * 51 for c in p) for p in row] for row in px]
    pnm(P("few.ppm"), b"P6", 255, [[c for p in row for c in p] for row in few])
    bits = [[(x // 8 + y // 8) % 2 for x in range(W)] for y in range(H)]
    pbm(P("bits.pbm"), bits)

    # each shape, and the grey picture it shows
    shapes = {
        "rgb": (("rgb.ppm",), greys),
        "rgb16": (("rgb16.ppm",), greys),
        "interlaced": (("rgb.ppm", "-interlace"), greys),
        "rgba": (("rgb.ppm", "-alpha=" + P("alpha.pgm")),
                 [[over_white(greys[y][x], alpha[y][x]) for x in range(W)] for y in range(H)]),
        "greyalpha": (("grey.pgm", "-alpha=" + P("alpha.pgm")),
                      [[over_white(greys[y][x], alpha[y][x]) for x in range(W)]
                       for y in range(H)]),
        "palette": (("few.ppm",), [[luma(*few[y][x]) for x in range(W)] for y in range(H)]),
        "grey16": (("grey16.pgm",), greys),
        "bits": (("bits.pbm",), [[0 if bits[y][x] else 255 for x in range(W)]
                                 for y in range(H)]),
    }
    want_type = {"rgb": (8, 2, 0), "rgb16": (16, 2, 0), "interlaced": (8, 2, 1),
                 "rgba": (8, 6, 0), "greyalpha": (8, 4, 0), "palette": (8, 3, 0),
                 "grey16": (16, 0, 0), "bits": (1, 0, 0)}
    for name, ((pnmfile, *opts), grey) in shapes.items():
        data = to_png(P(pnmfile), os.path.join(root, name + ".png"),
                      *[o for o in opts])
        depth, ctype, inter = png_header(data)
        # pnmtopng picks the smallest form: the shape asked for is checked
        check((depth, ctype, inter) == want_type[name] or
              (name == "palette" and ctype == 3),
              "%s.png is depth %d, colour type %d, interlace %d" % (name, depth, ctype, inter))
        pnm(P(name + "-grey.pgm"), b"P5", 255, grey)
        data = to_png(P(name + "-grey.pgm"), os.path.join(root, name + "-grey.png"), "-force")
        check(png_header(data)[:2] == (8, 0), "%s-grey.png is 8-bit grey" % name)
    cut = open(os.path.join(root, "rgb.png"), "rb").read()
    with open(os.path.join(root, "cut.png"), "wb") as f:
        f.write(cut[:len(cut) * 2 // 3])

    db = os.path.join(work, "index.db")
    rc, out, err = run("scan", "--phash-now", "--db", db, root)
    check(rc == 0, "scan: exit 0, got %d: %s" % (rc, err[-300:]))
    rows = {os.path.basename(p): (h, src_, w) for p, h, src_, w in
            db_rows(db, "SELECT path, phash, phash_src, warnings FROM files")}
    for name in shapes:
        got, want = rows.get(name + ".png"), rows.get(name + "-grey.png")
        check(got is not None and want is not None and want[0] is not None,
              "%s: both scanned, the grey one hashed: %s %s" % (name, got, want))
        check(got[0] == want[0] and got[1] == "image",
              "%s.png hashes as the grey picture it shows: %s, want %s" % (name, got, want))
    c = rows.get("cut.png")
    check(c is not None and c[0] is None and c[1] == "none" and c[2] and
          "cut short" in c[2], "a PNG cut short: no hash, a warning says why: %s" % (c,))
done()
