"""The manual page keeps up with the program: every command `seekless
--help` lists has its entry in docs/seekless.1 and its own --help; the
page renders without groff warnings (without groff that part is skipped:
exit 77, a failure where every test is required)."""
import os
import re
import shutil
import subprocess

from lib import BIN, check, done, run, skip_part

MAN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "seekless.1")
with open(MAN) as f:
    page = f.read().replace("\\-", "-")

rc, out, err = run("--help", check_rc=0)
commands = re.findall(r"^  (\w+)\s{2,}", out, re.M)
check(len(commands) >= 8, "commands listed: %r" % commands)
for c in commands:
    check(".B %s\n" % c in page or ".B seekless %s" % c in page, "man page covers " + c)
    rc, h, err = run(c, "--help", check_rc=0)
    check(h.startswith("usage: seekless %s" % c), "%s --help" % c)

if shutil.which("groff"):
    p = subprocess.run(["groff", "-ww", "-man", "-z", MAN], capture_output=True, text=True)
    check(p.returncode == 0 and not p.stderr.strip(), "groff -ww: " + p.stderr[:300])
else:
    skip_part("groff is not installed: the page's rendering is not checked")
done()
