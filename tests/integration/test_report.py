"""seekless report in a real browser: the shared corpus, a tree of hostile
names (markup, quotes, bytes that are not UTF-8, a control character, a
direction override; a camera model that closes the script), corrupt files,
identical copies and near copies (re-encoded, turned), one copy gone and
one changed after the scan, and a bench of a small tree.  The page is
opened in headless Chromium (cdp.py): its figures are checked against
queries of the index made here with Python's sqlite3, its hostile names
against escapes computed here, and it must log no error, ask for nothing
but itself, and hold no element a name injected.  Screenshots are kept
under the build folder."""
import os
import shutil
import sqlite3
import subprocess
import time

from cdp import Browser, find_chromium
from lib import BIN, check, done, run, skip, skip_part, tempdir

CORPUS = os.environ.get("SEEKLESS_CORPUS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "corpus", "real")
SHOTS = os.path.join(os.path.dirname(BIN), "report-shots")

if not find_chromium():
    skip("no chromium (apt-get install chromium: tools/deps.sh)")
if not os.path.isdir(CORPUS):
    skip("no shared corpus at %s" % CORPUS)
for tool in ("exiftool", "djpeg", "cjpeg", "jpegtran"):
    if not shutil.which(tool):
        skip("no %s (tools/deps.sh)" % tool)


def shown(name):
    """The text the page must show for a stored name: report.c's escapes,
    computed independently (bytes not UTF-8 and controls as \\xNN, direction
    overrides as \\uNNNN)."""
    out, i = [], 0
    while i < len(name):
        for k in (1, 2, 3, 4):
            try:
                ch = name[i:i + k].decode("utf-8")
                break
            except UnicodeDecodeError:
                ch = None
        if ch is None:
            out.append("\\x%02X" % name[i])
            i += 1
            continue
        cp = ord(ch)
        if cp < 0x20 or cp == 0x7f:
            out.append("\\x%02X" % cp)
        elif 0x202a <= cp <= 0x202e or 0x2066 <= cp <= 0x2069:
            out.append("\\u%04X" % cp)
        else:
            out.append(ch)
        i += len(ch.encode("utf-8"))
    return "".join(out)


def sh(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


os.makedirs(SHOTS, exist_ok=True)
with tempdir("report") as work:
    tree = os.path.join(work, "photos")
    shutil.copytree(CORPUS, os.path.join(tree, "corpus"))
    jpegs = sorted(os.path.join(tree, "corpus", n) for n in os.listdir(os.path.join(tree, "corpus"))
                   if n.lower().endswith(".jpg"))
    db = os.path.join(work, "i.db")
    # the pictures: a photo from the test tree (a real decode), its near
    # copies, identical copies
    pics = os.path.join(tree, "pics")
    os.makedirs(pics)
    orig = os.path.join(pics, "orig.jpg")
    # a photo with an EXIF thumbnail (the picture comes from it); its
    # copies re-encoded and turned lose their EXIF (a decode of the image)
    shutil.copy(os.path.join(CORPUS, "exif-samples__jpg__hdr__canon_hdr_NO.jpg"), orig)
    with open(os.path.join(pics, "resaved.jpg"), "wb") as f:
        p = subprocess.run(["djpeg", orig], capture_output=True, check=True)
        subprocess.run(["cjpeg", "-quality", "60"], input=p.stdout, stdout=f, check=True)
    sh("jpegtran", "-rotate", "90", "-copy", "none", "-outfile", os.path.join(pics, "turned.jpg"), orig)
    shutil.copy(orig, os.path.join(pics, "gone.jpg"))
    shutil.copy(orig, os.path.join(pics, "changed.jpg"))
    # hostile names: each a copy of one corpus JPEG (identical to it)
    hostile = os.path.join(tree, "hostile")
    os.makedirs(hostile)
    names = [b"<img src=x onerror=window.pwned=1>.jpg", b"q\"uo'te&amp;.jpg",
             b"bad\xff\xfe.jpg", b"nl\nname.jpg", b"rtl\xe2\x80\xaegpj.exe.jpg",
             b"<b>bold</b".replace(b"/", b"") + b".jpg"]
    for n in names:
        shutil.copy(jpegs[0], os.path.join(hostile.encode(), n))
    # and all of them by a camera whose model closes the script (enough of
    # them to be among the top 20 cameras)
    sh("exiftool", "-q", "-overwrite_original",
       "-Model=</script><script>window.pwned=2</script>", hostile)
    with open(os.path.join(hostile, "corrupt<i>.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe1\x00\x10Exif\x00\x00not a jpeg at all")
    with open(os.path.join(hostile, "cut.png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n\x00\x00")
    run("scan", "--db", db, tree)  # rc 1: the corrupt files
    # after the scan: one copy gone, one changed
    os.remove(os.path.join(pics, "gone.jpg"))
    with open(os.path.join(pics, "changed.jpg"), "ab") as f:
        f.write(b"\0" * 10)
    # a bench of a small tree stores its runs
    small = os.path.join(work, "small")
    shutil.copytree(os.path.join(tree, "pics"), small)
    run("bench", "--db", db, "--runs", "1", "--orders", "physical,fs,random", small,
        check_rc=0)

    page = os.path.join(work, "report.html")
    t0 = time.time()
    run("report", "--db", db, "-o", page, check_rc=0)
    took = time.time() - t0
    size = os.path.getsize(page)
    # written beside its place, then put there in one step (a page cut off
    # leaves the last whole one): nothing else is left in the folder
    check(not [n for n in os.listdir(work) if n.endswith(".part")],
          "no part-written page left: %s" % os.listdir(work))
    # a disk too full for the page: the last whole one stays
    full = os.path.join(work, "full")
    os.mkdir(full)
    if os.geteuid() != 0:
        skip_part("a full disk needs root (a small tmpfs)")
    else:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % (size // 2), "tmpfs", full],
                       check=True)
        try:
            old = os.path.join(full, "report.html")
            with open(old, "w") as f:
                f.write("the last whole page")
            rc, out, err = run("report", "--db", db, "-o", old)
            check(rc == 3 and open(old).read() == "the last whole page" and os.listdir(full) ==
                  ["report.html"], "a full disk keeps the last page whole, no part left: %d %s %s"
                  % (rc, err.strip(), os.listdir(full)))
        finally:
            subprocess.run(["umount", full], check=True)
    taken = os.path.join(work, "a-folder.html")
    os.mkdir(taken)
    rc, out, err = run("report", "--db", db, "-o", taken)
    check(rc == 3 and "a-folder.html" in err and os.path.isdir(taken)
          and not [n for n in os.listdir(work) if n.endswith(".part")],
          "a page that cannot take its place: exit 3, named, the part removed: %d %s" % (rc, err))
    print("report: %d bytes in %.2f s" % (size, took))
    check(size < 5 << 20, "a small report: %d bytes" % size)
    body = open(page, "rb").read()
    check(b"http://" not in body.replace(b"http://www.w3.org/2000/svg", b"")
          and b"https://" not in body, "the page names no URL but SVG's namespace")

    # the index, read here
    con = sqlite3.connect(db)
    con.text_factory = bytes
    live = "deleted_at IS NULL"
    n_files = con.execute("SELECT count(*) FROM files WHERE " + live).fetchone()[0]
    by_format = {(f or b"(unknown)").decode(): n for f, n in con.execute(
        "SELECT format, count(*) FROM files WHERE %s GROUP BY format" % live)}
    dup = con.execute("SELECT count(*), coalesce(sum(n), 0), coalesce(sum(size * (n - 1)), 0)"
                      " FROM (SELECT content_hash, max(size) AS size, count(*) AS n FROM files"
                      " WHERE %s AND size > 0 AND content_hash IS NOT NULL"
                      " GROUP BY content_hash HAVING count(*) > 1)" % live).fetchone()
    err_rows = con.execute("SELECT path, error FROM files WHERE %s AND error IS NOT NULL"
                           " ORDER BY path" % live).fetchall()
    n_scans = con.execute("SELECT count(*) FROM scans WHERE command <> 'bench'").fetchone()[0]
    bench = con.execute("SELECT id FROM benches ORDER BY id DESC").fetchall()
    orders = con.execute("SELECT order_name, wall_s FROM bench_orders WHERE bench_id = ?"
                         " ORDER BY pos", (bench[0][0],)).fetchall() if bench else []
    con.close()
    check(len(err_rows) >= 2, "the corrupt files have errors: %d" % len(err_rows))
    check(len(bench) == 1 and len(orders) == 3, "bench stored: %s %s" % (bench, orders))
    rc, out, _ = run("dupes", "--near", "--json", "--db", db, check_rc=0)
    near_groups = [l for l in out.splitlines() if l.strip()]

    with Browser() as b:
        b.open("file://" + page)
        shot = os.path.join(SHOTS, "report.png")
        b.screenshot(shot)
        print("screenshot: %s" % shot)
        d = b.eval("""(function(){
          function rows(id){var t=document.getElementById(id);if(!t)return null;
            return Array.prototype.map.call(t.tBodies[0].rows,function(r){
              return Array.prototype.map.call(r.cells,function(c){return c.textContent;});});}
          function data(id,k){var e=document.getElementById(id);return e?e.getAttribute(k):null;}
          return {files:data('total-files','data-v'), formats:rows('t-formats'),
            cameras:rows('t-cameras'), errors:rows('t-errors'),
            errTotal:data('errors-count','data-total'), history:rows('t-history'),
            histTotal:data('history-count','data-total'),
            idGroups:data('identical-summary','data-groups'),
            idFiles:data('identical-summary','data-files'),
            idGain:data('identical-summary','data-gain'),
            nearGroups:data('near-summary','data-groups'),
            benchTables:document.querySelectorAll('table[id^="t-bench-"]').length,
            bench:rows('t-bench-%d'),
            headpaths:document.querySelectorAll('.headpath svg').length,
            dots:document.querySelectorAll('.headpath circle').length,
            chart:document.querySelectorAll('#history-chart polyline').length,
            imgs:Array.prototype.map.call(document.querySelectorAll('.near img'),
              function(i){return i.naturalWidth;}),
            figures:Array.prototype.map.call(document.querySelectorAll('.near figure'),
              function(f){return [f.querySelector('figcaption').textContent,
                (f.querySelector('.nopic')||{}).textContent||null, !!f.querySelector('img')];}),
            texts:Array.prototype.map.call(document.querySelectorAll('td,figcaption,.path'),
              function(e){return e.textContent;}),
            scripts:document.scripts.length,
            injected:document.querySelectorAll('img[src="x"],[onerror],b:not(dd b):not(.devs b)').length,
            pwned:window.pwned===undefined?null:window.pwned};})()""" % (bench[0][0] if bench else 0))
        # sorting: a click on "files" orders the formats by count
        b.eval("document.querySelector('#t-formats th:nth-child(2)').click()")
        counts = b.eval("Array.prototype.map.call(document.querySelectorAll('#t-formats tbody tr'),"
                        "function(r){return Number(r.cells[1].getAttribute('data-v'));})")
        b.screenshot(os.path.join(SHOTS, "report-sorted.png"), full=False)
        console, requests = list(b.console), list(b.requests)

    check(int(d["files"]) == n_files, "files: page %s, index %d" % (d["files"], n_files))
    page_formats = {r[0]: int(r[1]) for r in d["formats"]}
    check(page_formats == by_format, "formats: page %s, index %s" % (page_formats, by_format))
    check(counts == sorted(counts), "a click sorts by files: %s" % counts)
    check((int(d["idGroups"]), int(d["idFiles"]), int(d["idGain"])) == tuple(dup),
          "identical groups, files, bytes to gain: page %s %s %s, index %s"
          % (d["idGroups"], d["idFiles"], d["idGain"], dup))
    check(int(d["errTotal"]) == len(err_rows), "errors: page %s, index %d"
          % (d["errTotal"], len(err_rows)))
    want = [[shown(p), shown(e)] for p, e in err_rows[:200]]
    check([r[:2] for r in d["errors"]] == want, "error rows as the index has them:\n%s\n%s"
          % (d["errors"][:5], want[:5]))
    check(int(d["histTotal"]) == n_scans and len(d["history"]) == n_scans,
          "history: %s rows of %s, index %d" % (len(d["history"]), d["histTotal"], n_scans))
    check(d["chart"] == 2, "the history chart has its two lines")
    check(d["benchTables"] == 1 and [r[0] for r in d["bench"]] == [o.decode() for o, _ in orders]
          and all(abs(float(r[1]) - w) < 0.006 for r, (_, w) in zip(d["bench"], orders)),
          "bench table as stored: %s %s" % (d["bench"], orders))
    check(d["headpaths"] == 1 and d["dots"] > 0, "head path drawn: %d dots" % d["dots"])
    check(int(d["nearGroups"]) == len(near_groups), "near groups: page %s, dupes --near %d"
          % (d["nearGroups"], len(near_groups)))
    figs = {f[0]: f for f in d["figures"]}
    for n in ("orig.jpg", "resaved.jpg", "turned.jpg"):
        f = figs.get(os.path.join(pics, n))
        check(f is not None and f[2], "a picture of %s: %s" % (n, f))
    f = figs.get(os.path.join(pics, "gone.jpg"))
    check(f is not None and not f[2] and "not there" in f[1], "gone.jpg said gone: %s" % (f,))
    f = figs.get(os.path.join(pics, "changed.jpg"))
    check(f is not None and not f[2] and "changed" in f[1], "changed.jpg said changed: %s" % (f,))
    check(d["imgs"] and all(w > 0 for w in d["imgs"]), "every picture decodes: %s" % d["imgs"])
    # hostile text shown as text
    texts = set(d["texts"])
    for n in names:
        want = shown(os.path.join(hostile.encode(), n))
        check(want in texts, "hostile name shown escaped: %r" % want)
    check(any(r[0].endswith(" </script><script>window.pwned=2</script>") for r in d["cameras"]),
          "the camera model is text: %s" % [r[0] for r in d["cameras"]])
    check(d["scripts"] == 1 and d["injected"] == 0 and d["pwned"] is None,
          "nothing injected: %d scripts, %d injected elements, pwned %s"
          % (d["scripts"], d["injected"], d["pwned"]))
    errors = [c for c in console if c[0] in ("error", "exception", "warning", "assert")]
    check(not errors, "the page logs no error: %s" % errors)
    outside = [u for u in requests if not u.startswith("file://") and not u.startswith("data:")]
    check(not outside, "the page asks for nothing outside itself: %s" % outside)
    check(requests[:1] == ["file://" + page], "the page itself loaded: %s" % requests[:3])
done()
