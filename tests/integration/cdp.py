"""A headless Chromium driven through the DevTools protocol, with the
standard library only: a websocket client of its own (RFC 6455, the part
the protocol uses), so that CI needs Debian's chromium and nothing else.

    with Browser() as b:
        b.open("file:///tmp/r.html")
        b.eval("document.title")
        b.screenshot("/tmp/r.png")
        b.console, b.requests    # what the page logged and asked for
"""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _Socket:
    def __init__(self, url):
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        self.s = socket.create_connection((m.group(1), int(m.group(2))), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n"
                        % (m.group(3), m.group(1), m.group(2), key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.s.recv(4096)
            if not chunk:
                raise RuntimeError("DevTools closed the connection during the handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError("DevTools refused the websocket: %r" % head[:200])
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def _exact(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack("!H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._exact(8))[0]
            payload = self._exact(n)
            op = b0 & 0x0f
            if op == 8:
                raise RuntimeError("DevTools closed the websocket")
            if op in (9, 10):  # ping, pong: the protocol sends none we must answer
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Browser:
    def __init__(self, width=1280, height=1000):
        self.exe = find_chromium()
        self.width, self.height = width, height
        self.console = []   # (level, text) of console calls, exceptions, log errors
        self.requests = []  # every URL the page asked for
        self.next_id = 0
        self.events = []

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="seekless-chromium-")
        args = [self.exe, "--headless", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--remote-debugging-port=0",
                "--user-data-dir=" + self.profile,
                "--window-size=%d,%d" % (self.width, self.height), "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses its sandbox as root
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        url = None
        seen = []
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                url = m.group(1)
                break
        if not url:
            self.close()
            raise RuntimeError("chromium did not start:\n" + "".join(seen[-20:]))
        port = re.match(r"ws://[^:]+:(\d+)/", url).group(1)
        pages = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port))
        page = [p for p in pages if p.get("type") == "page"][0]
        self.ws = _Socket(page["webSocketDebuggerUrl"])
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(domain + ".enable")
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if getattr(self, "proc", None):
            self.proc.kill()
            self.proc.wait()
            self.proc.stderr.close()
            self.proc = None
        if getattr(self, "profile", None):
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None

    def _event(self, msg):
        method, p = msg.get("method"), msg.get("params", {})
        self.events.append(method)
        if method == "Runtime.consoleAPICalled":
            self.console.append((p["type"], " ".join(str(a.get("value", a.get("description")))
                                                    for a in p.get("args", []))))
        elif method == "Runtime.exceptionThrown":
            self.console.append(("exception", json.dumps(p["exceptionDetails"])[:500]))
        elif method == "Log.entryAdded":
            e = p["entry"]
            self.console.append((e["level"], e.get("text", "") + " " + e.get("url", "")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])

    def call(self, method, **params):
        self.next_id += 1
        me = self.next_id
        self.ws.send(json.dumps({"id": me, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == me:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self._event(msg)

    def wait_for(self, method, timeout=60):
        deadline = time.time() + timeout
        while method not in self.events:
            if time.time() > deadline:
                raise RuntimeError("no %s within %d s" % (method, timeout))
            self._event(json.loads(self.ws.recv()))

    def open(self, url):
        self.events = []
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.eval("1")  # let what the load queued be reported

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluating %s: %s" % (expr[:80], r["exceptionDetails"]))
        return r["result"].get("value")

    def screenshot(self, path, full=True):
        params = {"format": "png"}
        if full:  # the whole page, not the window
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"],
                                "height": min(size["height"], 16000), "scale": 1})
        r = self.call("Page.captureScreenshot", **params)
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))
