"""cmake --install installs the product and nothing else: seekless, its
manual page, the systemd units (system and user, ExecStart naming the
installed binary) and the sample configuration as an example; never the
development tools (mkcorpus, hddsim, phashcmp).  Once with --prefix, once
the way packagers stage it (DESTDIR, prefix /usr).
Usage: test_install.py CMAKE BUILD_DIR"""
import os
import shutil
import subprocess
import sys

from lib import check, done, skip_part, tempdir

cmake, build = sys.argv[1], sys.argv[2]

EXPECTED = sorted([
    "bin/seekless",
    "lib/systemd/system/seekless.service",
    "lib/systemd/system/seekless.timer",
    "lib/systemd/user/seekless.service",
    "lib/systemd/user/seekless.timer",
    "share/doc/seekless/examples/seekless.conf",
    "share/man/man1/seekless.1",
])


def listing(top):
    out = []
    for d, dirs, files in os.walk(top):
        for f in files:
            out.append(os.path.relpath(os.path.join(d, f), top))
    return sorted(out)


def install(*args, env=None):
    p = subprocess.run([cmake, "--install", build] + list(args), capture_output=True,
                       text=True, env=env)
    check(p.returncode == 0, "cmake --install %s: %s%s" % (" ".join(args), p.stdout, p.stderr))


def units(top, bindir):
    """The installed units name bindir's seekless and systemd finds them sound."""
    system = open(os.path.join(top, "lib/systemd/system/seekless.service")).read()
    user = open(os.path.join(top, "lib/systemd/user/seekless.service")).read()
    check("ExecStart=%s/seekless scan --scheduled --config /etc/seekless.conf " % bindir
          in system, "system unit runs the installed seekless: " + system)
    check("ExecStart=%s/seekless scan --scheduled --config %%E/seekless/config\n" % bindir
          in user, "user unit runs the installed seekless: " + user)
    check("/usr/local/bin" not in system + user or bindir == "/usr/local/bin",
          "no /usr/local/bin left in the units")


with tempdir("install") as work:
    prefix = os.path.join(work, "prefix")
    install("--prefix", prefix)
    got = listing(prefix)
    check(got == EXPECTED, "installed files:\n  %s\nexpected:\n  %s"
          % ("\n  ".join(got), "\n  ".join(EXPECTED)))
    if got == EXPECTED:
        units(prefix, os.path.join(prefix, "bin"))
        exe = os.path.join(prefix, "bin", "seekless")
        p = subprocess.run([exe, "--version"], capture_output=True, text=True)
        check(p.returncode == 0 and p.stdout.startswith("seekless "),
              "the installed seekless runs: %r %r" % (p.stdout, p.stderr))
        if shutil.which("systemd-analyze"):
            # a user manager wants a runtime folder, which a CI root has not
            rt = os.path.join(work, "run")
            os.mkdir(rt, 0o700)
            for scope, flag in (("system", []), ("user", ["--user"])):
                d = os.path.join(prefix, "lib/systemd", scope)
                p = subprocess.run(["systemd-analyze", "verify"] + flag +
                                   [os.path.join(d, "seekless.service"),
                                    os.path.join(d, "seekless.timer")],
                                   capture_output=True, text=True,
                                   env=dict(os.environ, XDG_RUNTIME_DIR=rt))
                check(p.returncode == 0 and not (p.stdout + p.stderr).strip(),
                      "systemd-analyze verify (%s units) is silent: %s%s"
                      % (scope, p.stdout, p.stderr))
        else:
            skip_part("systemd-analyze is not installed: the installed units are not verified")

    # staged as a package build does: DESTDIR, prefix /usr
    stage = os.path.join(work, "stage")
    install("--prefix", "/usr", env=dict(os.environ, DESTDIR=stage))
    got = listing(os.path.join(stage, "usr"))
    check(got == EXPECTED and listing(stage) == ["usr/" + f for f in EXPECTED],
          "staged files: %s" % listing(stage))
    if got == EXPECTED:
        units(os.path.join(stage, "usr"), "/usr/bin")
done()
