"""What scan and bench print.  Progress goes to terminals only: on a
pseudo-terminal a scan shows its phases and a read line (files, MB, MB/s,
ETA) on standard error; through a pipe only the summary; --no-progress and
--quiet silence it; nothing is ever coloured (NO_COLOR holds by
construction).  --json gives the scan's summary and the bench's table as
JSON objects."""
import json
import os
import pty
import subprocess

from lib import BIN, check, done, mkcorpus, tempdir

with tempdir("progress", base="/dev/shm") as work:
    root = os.path.join(work, "photos")
    mkcorpus(root, "--files", 200, "--median", "20k", "--seed", 51, "--no-sync")

    def on_tty(*args):
        master, slave = pty.openpty()
        p = subprocess.Popen([BIN] + list(args), stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        out = p.stdout.read().decode()
        p.wait()
        chunks = []
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:
                break
            if not b:
                break
            chunks.append(b)
        os.close(master)
        return p.returncode, out, b"".join(chunks).decode(errors="replace")

    rc, out, err = on_tty("scan", "--db", os.path.join(work, "a.db"), root)
    check(rc == 0 and "seekless scan: ok" in out, "scan on a terminal: %d" % rc)
    check("[walk]" in err and "[locate]" in err and "[read]" in err and "MB/s" in err and
          "ETA" in err, "phases and the read line on the terminal: %r" % err[-300:])
    check("\x1b[" not in err + out, "no colour codes")
    # the last read line is where the run ended: every file read
    reads = [l for l in err.replace("\r", "\n").splitlines() if l.startswith("[read]")]
    nfiles = len([f for _, _, fs in os.walk(root) for f in fs])
    check(reads and reads[-1].startswith("[read] %d/%d files" % (nfiles, nfiles)),
          "the last progress line has every file read: %r" % (reads[-1:],))

    p = subprocess.run([BIN, "scan", "--full", "--db", os.path.join(work, "a.db"), root],
                       capture_output=True, text=True)
    check(p.returncode == 0 and "[read]" not in p.stderr and "\r" not in p.stderr,
          "through a pipe: only the summary: %r" % p.stderr[:200])
    rc, out, err = on_tty("scan", "--no-progress", "--full", "--db", os.path.join(work, "a.db"),
                          root)
    check("[read]" not in err, "--no-progress")
    rc, out, err = on_tty("scan", "--quiet", "--full", "--db", os.path.join(work, "a.db"), root)
    check("[read]" not in err and out == "", "--quiet: nothing")

    # --json: the summary as one object, for scripts
    with open(os.path.join(root, "bad.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe0 not really")
    p = subprocess.run([BIN, "scan", "--json", "--db", os.path.join(work, "a.db"), root],
                       capture_output=True, text=True)
    s = json.loads(p.stdout)
    check(p.returncode == 1 and s["status"] == "errors" and s["errors"] == 1 and
          s["new"] == 1 and s["unchanged"] == 200 and s["files_read"] == 1,
          "scan --json: %r" % {k: s[k] for k in ("status", "errors", "new", "unchanged")})
    check(len(s["devices"]) == 1 and s["devices"][0]["order"] in ("inode", "fs", "physical")
          and s["devices"][0]["reason"], "its device, order and reason")
    check(len(s["errors_shown"]) == 1 and "bad.jpg" in s["errors_shown"][0], "the error")

    rc, out, err = on_tty("bench", "--runs", "1", "--orders", "fs", "--db",
                          os.path.join(work, "b.db"), root)
    check(rc == 0 and "[fs]" in err and "MB/s" in err and "run 1" in err,
          "bench progress on a terminal: %r" % err[-200:])

    # bench --json: medians per order and every run's time
    p = subprocess.run([BIN, "bench", "--json", "--runs", "2", "--orders", "physical,fs",
                        "--db", os.path.join(work, "b.db"), root], capture_output=True, text=True)
    b = json.loads(p.stdout)
    check(p.returncode == 0 and b["files"] == 201 and [o["order"] for o in b["orders"]] ==
          ["physical", "fs"] and all(len(o["run_wall_s"]) == 2 for o in b["orders"]) and
          b["orders"][1]["speedup_over_fs"] == 1.0, "bench --json: %r" % b)
done()
