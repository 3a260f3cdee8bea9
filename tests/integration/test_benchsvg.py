"""`seekless bench --svg` on a drive of many files: past 10,000 dots a
panel keeps one dot per 2-pixel cell (a dot is 2.6 pixels across), so the
picture of a big drive stays small and looks the same.  Checked on the
SVG itself: every dot inside its panel, no two in one cell, far fewer dots
than files, and the physical panel still a sweep (later dots higher up,
further into the disk); a small drive keeps a dot per file (test_hddsim)."""
import os
import re
import subprocess

from lib import check, done, loop_fs, run, tempdir

N = 12000

with loop_fs("ext4", 256) as fs, tempdir("benchsvg") as work:
    root = os.path.join(fs.mnt, "many")
    for d in range(40):
        sub = os.path.join(root, "d%02d" % d)
        os.makedirs(sub)
        for i in range(N // 40):
            with open(os.path.join(sub, "f%04d.jpg" % i), "wb") as f:
                f.write(os.urandom(2048))
    subprocess.run(["sync", "-f", root], check=True)  # this file system only
    svg = os.path.join(work, "head.svg")
    rc, out, err = run("bench", "--orders", "physical,fs", "--runs", "1", "--svg", svg,
                       "--db", os.path.join(work, "b.db"), root)
    check(rc == 0, "bench: %d %s" % (rc, err[-400:]))
    body = open(svg).read()
    panels = [(float(x), float(y), float(w), float(h)) for x, y, w, h in re.findall(
        r'<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="none"',
        body)]
    check(len(panels) == 2, "two panels: %s" % panels)
    dots = [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([0-9.]+)" cy="([0-9.]+)"',
                                                       body)]
    cells = {}
    outside = 0
    for x, y in dots:
        p = next((k for k, (px, py, pw, ph) in enumerate(panels)
                  if px - 0.1 <= x <= px + pw + 0.1 and py - 0.1 <= y <= py + ph + 0.1), None)
        if p is None:
            outside += 1
            continue
        px, py = panels[p][0], panels[p][1]
        key = (p, int((x - px) / 2), int((y - py) / 2))
        cells[key] = cells.get(key, 0) + 1
    print("%d files, %d dots in %d cells, %.0f KB" % (N, len(dots), len(cells), len(body) / 1e3))
    check(outside == 0, "every dot inside a panel: %d outside" % outside)
    check(all(v == 1 for v in cells.values()), "no two dots in one cell")
    # the physical panel: in time order, each dot no lower than the last
    # (the disk read front to back; a dot's cell may hold an earlier file)
    phys = sorted((x, y) for (x, y) in dots if panels[0][1] <= y <= panels[0][1] + panels[0][3])
    rising = sum(b[1] <= a[1] + 2 for a, b in zip(phys, phys[1:])) / max(1, len(phys) - 1)
    check(rising >= 0.95, "the physical panel is a sweep: %.3f of steps go up" % rising)
    check(0 < len(dots) < 2 * N and len(dots) > 200,
          "thinned, not emptied: %d dots for %d files in two orders" % (len(dots), 2 * N))
    check(len(body) < 2 * N * 45, "the picture is smaller than a dot per file would make: %d B"
          % len(body))
done()
