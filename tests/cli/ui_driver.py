#!/usr/bin/env python3
"""Drive headless Chromium through chromedriver's W3C WebDriver HTTP API,
with the standard library only (tests/cli/test_ui.sh).

usage: ui_driver.py DRIVER_URL COMMAND ARGS...
  new URL [WIDTHxHEIGHT]   open a session on URL; prints the session id
  js SID SCRIPT            run SCRIPT (a function body: `return ...`); prints
                           the result as JSON
  wait SID SCRIPT SECONDS  run SCRIPT until it returns something truthy;
                           prints it, exit 1 with the last value on timeout
  shot SID FILE            save a PNG screenshot of the viewport
  fullshot SID FILE        resize the window to the page's height first
  logs SID                 print the browser console's entries, one a line
                           ("LEVEL message"); exit 0
  quit SID                 end the session
"""
import base64
import json
import sys
import time
import urllib.error
import urllib.request


def call(base, method, path, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read() or b"{}").get("value")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            val = json.loads(raw).get("value") or {}
            msg = "%s: %s" % (val.get("error"), (val.get("message") or "").splitlines()[0])
        except (ValueError, AttributeError, IndexError):
            msg = raw[:300].decode(errors="replace")
        raise SystemExit("webdriver %s %s: HTTP %d %s" % (method, path, e.code, msg))


def new_session(base, url, size):
    w, h = (int(x) for x in size.split("x"))
    caps = {
        "capabilities": {
            "alwaysMatch": {
                "browserName": "chrome",
                "acceptInsecureCerts": True,
                "goog:loggingPrefs": {"browser": "ALL"},
                "goog:chromeOptions": {
                    "binary": "/usr/bin/chromium",
                    "args": [
                        "--headless=new", "--no-sandbox", "--disable-gpu",
                        "--disable-dev-shm-usage", "--ignore-certificate-errors",
                        "--hide-scrollbars", "--force-device-scale-factor=1",
                        "--window-size=%d,%d" % (w, h), "--no-first-run",
                        "--disable-extensions", "--disable-background-networking",
                    ],
                },
            }
        }
    }
    v = call(base, "POST", "/session", caps, timeout=120)
    sid = v["sessionId"]
    call(base, "POST", "/session/%s/url" % sid, {"url": url})
    return sid


def js(base, sid, script):
    return call(base, "POST", "/session/%s/execute/sync" % sid, {"script": script, "args": []})


def browser_logs(base, sid):
    # chromedriver serves the legacy log endpoint under two names.
    for path in ("/session/%s/se/log" % sid, "/session/%s/log" % sid):
        data = json.dumps({"type": "browser"}).encode()
        req = urllib.request.Request(base + path, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read()).get("value") or []
        except urllib.error.HTTPError:
            continue
    raise SystemExit("webdriver: no log endpoint answered")


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    base, cmd, args = argv[1].rstrip("/"), argv[2], argv[3:]
    if cmd == "new":
        print(new_session(base, args[0], args[1] if len(args) > 1 else "1600x1200"))
    elif cmd == "js":
        print(json.dumps(js(base, args[0], args[1]), ensure_ascii=False))
    elif cmd == "wait":
        sid, script, limit = args[0], args[1], float(args[2])
        deadline = time.monotonic() + limit
        val = None
        while True:
            val = js(base, sid, script)
            if val:
                print(json.dumps(val, ensure_ascii=False))
                return 0
            if time.monotonic() > deadline:
                print(json.dumps(val, ensure_ascii=False))
                return 1
            time.sleep(0.2)
    elif cmd in ("shot", "fullshot"):
        sid, path = args
        if cmd == "fullshot":
            dims = js(base, sid, "return [window.outerWidth, window.outerHeight - window.innerHeight"
                      " + Math.ceil(document.documentElement.scrollHeight)]")
            call(base, "POST", "/session/%s/window/rect" % sid,
                 {"width": int(dims[0]), "height": int(dims[1])})
            time.sleep(0.5)
        png = base64.b64decode(call(base, "GET", "/session/%s/screenshot" % sid))
        with open(path, "wb") as f:
            f.write(png)
    elif cmd == "logs":
        for e in browser_logs(base, args[0]):
            print("%s %s" % (e.get("level"), e.get("message", "").replace("\n", " ")))
    elif cmd == "quit":
        call(base, "DELETE", "/session/%s" % args[0])
    else:
        raise SystemExit("unknown command %s\n%s" % (cmd, __doc__))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
