#!/usr/bin/env python3
"""listweb's token, limits and page rights, checked with real processes and Chromium.

Uses listweb_test.py's listd, listweb and page helpers and command line:

    listweb_security_test.py --bin .build/debug --artifacts .build/artifacts/listweb

- the address listweb prints opens the index with its token, and a second HTTP server on another port of
  127.0.0.1 (one a page's images point at, and one the browser visits) never gets the token: no Cookie
  with it, no Referer with it;
- images come from other origins only where --image-origins names them (CSP img-src 'self' data:);
- with --allow-actions a page changes its own view only: an expand of a shared outline is refused and the
  data source's version stays;
- pages beyond --max-pages get a 503 page while /metrics and listctl still work;
- a large grid page (1400 × 900, thousands of cells) is drawn, and a message of several hundred KiB passes;
- a name with a right-to-left override is shown escaped in the index and the page's title;
- hundreds of idle connections (descriptors short) do not keep the token holder from / and /healthz, and a
  connection that sends no request head is closed after --header-timeout.
"""

import http.client
import http.server
import json
import os
import resource
import socket
import subprocess
import threading
import time
import urllib.parse

from listweb_test import Checks, Listweb, run_checks, wait_until


class Recorder:
    """An HTTP server on another port of 127.0.0.1 that records every request's path and headers."""

    def __init__(self):
        self.requests = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                recorder.requests.append((self.path, dict(self.headers.items())))
                body = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
                self.send_response(200)
                self.send_header("Content-Type", "image/gif")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def paths(self):
        return [path for path, _ in self.requests]

    def stop(self):
        self.server.shutdown()


class Squatter:
    """Another program on listweb's address while listweb is down: an HTTP server on 127.0.0.1:`port` that
    records every request and answers /api/proof wrongly, or (`relay_to`) with what the real listweb on
    another port answers."""

    def __init__(self, port):
        self.requests = []
        self.relay_to = None
        squatter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                squatter.requests.append((self.path, dict(self.headers.items())))
                if self.path.startswith("/api/proof?"):
                    if squatter.relay_to:
                        connection = http.client.HTTPConnection("127.0.0.1", squatter.relay_to, timeout=20)
                        connection.request("GET", self.path)
                        body = connection.getresponse().read()
                        connection.close()
                    else:
                        body = json.dumps({"port": port, "proof": "0" * 64}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                else:
                    body = b"not here"
                    self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def proofs(self):
        return sum(1 for path, _ in self.requests if path.startswith("/api/proof?"))

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def cpu_seconds(pid):
    """User and system time of a process so far, in seconds."""
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class SecurityChecks(Checks):
    def __init__(self, arguments):
        super().__init__(arguments)
        self.recorder = Recorder()
        self.binary = os.path.join(arguments.bin, "listweb")
        self.others = []

    def close(self):
        for listweb in self.others:
            listweb.stop()
        self.recorder.stop()
        super().close()

    def listweb(self, *arguments, **options):
        listweb = Listweb(self.binary, self.listd, *arguments, **options)
        self.others.append(listweb)
        return listweb

    def image_source(self, name, image):
        self.listd.request("register", registration="imaged", contentConfiguration={"type": "cell", "text": "{{title}}", "image": "{{image}}"})
        self.listd.request("apply", dataSource=name, snapshot={"sections": [{"id": "s", "items": [{"id": "a", "data": {"title": "A", "image": image}}]}]})
        self.listd.request("setCellProvider", dataSource=name, rules=[], default="imaged")

    def the_token_never_reaches_another_port(self):
        origin = f"http://127.0.0.1:{self.recorder.port}"
        listweb = self.listweb("--image-origins", origin)
        assert listweb.printed.startswith(listweb.base + "/#token="), listweb.printed
        self.image_source("pictured", f"{origin}/picture.gif")
        # The page's own CSP applies (no bypass): what a person's browser does.
        context = self.browser.new_context()
        page = context.new_page()
        page.goto(listweb.printed)
        page.wait_for_selector("#sources tbody tr", timeout=20000)
        names = page.evaluate("[...document.querySelectorAll('#sources tbody tr td:first-child')].map(td => td.textContent)")
        assert "pictured" in names and "home" in names, names
        assert "token" not in page.url, f"the address bar keeps the token: {page.url}"
        page.click("text=pictured")
        page.wait_for_selector(".cell[data-item='a'] img", timeout=20000)
        wait_until(lambda: "/picture.gif" in self.recorder.paths(), "the image from the other port")
        page.goto(f"{origin}/visited")
        wait_until(lambda: "/visited" in self.recorder.paths(), "the visit to the other port")
        for path, headers in self.recorder.requests:
            for name, value in headers.items():
                assert listweb.token not in value, f"{path}: {name} carries the token"
            assert "listweb_token" not in headers.get("Cookie", ""), (path, headers)
            assert listweb.base not in headers.get("Referer", ""), (path, headers)
        assert not [cookie for cookie in context.cookies() if listweb.token in cookie["value"]], context.cookies()
        context.close()

    def a_program_on_the_port_never_gets_the_token(self):
        """listweb goes down and another program takes its port: the open page reconnects there but sends
        the token only after a proof (/api/proof) that program cannot give, not even by passing the question
        on to listweb on another port; listweb back on its port, the same tab carries on."""
        listweb = self.listweb()
        port = listweb.port
        page = self.page(listweb, "/sources/home")
        listweb.stop()
        squatter = Squatter(port)
        try:
            page.wait_for_function("document.querySelector('.outage') && !document.querySelector('.outage').hidden", timeout=20000)
            wait_until(lambda: squatter.proofs() >= 2, "the page asking the squatter for proofs")
            # The same token on another port: the squatter passes the page's questions on to it.
            listweb.start(0, listweb.token)
            assert listweb.port != port
            squatter.relay_to = listweb.port
            asked = squatter.proofs()
            wait_until(lambda: squatter.proofs() >= asked + 2, "the page asking again while the squatter relays")
            assert page.evaluate("!document.querySelector('.outage').hidden")
            leaked = [request for request in squatter.requests if listweb.token in json.dumps(request)]
            assert not leaked, leaked
            assert all(path.startswith("/api/proof?") for path, _ in squatter.requests), squatter.requests
        finally:
            squatter.stop()
        listweb.stop()
        listweb.start(port, listweb.token)
        page.wait_for_function("document.querySelector('.outage').hidden && window.listweb.ready", timeout=30000)
        page.context.close()

    def images_come_only_from_named_origins(self):
        status, headers, _ = self.reader.get("/")
        assert "img-src 'self' data:;" in headers["Content-Security-Policy"], headers["Content-Security-Policy"]
        self.image_source("elsewhere", f"http://localhost:{self.recorder.port}/elsewhere.gif")
        page = self.page(self.reader, "/sources/elsewhere")
        page.wait_for_selector(".cell[data-item='a'] .symbol", timeout=20000)
        page.wait_for_timeout(1000)
        assert "/elsewhere.gif" not in self.recorder.paths(), "an image from an origin --image-origins does not name"
        assert page.evaluate("document.querySelectorAll('#collection img').length") == 0
        page.context.close()
        named = self.listweb("--image-origins", f"http://localhost:{self.recorder.port}")
        page = self.page(named, "/sources/elsewhere")
        wait_until(lambda: "/elsewhere.gif" in self.recorder.paths(), "the image from the named origin")
        page.context.close()

    def a_page_changes_its_own_view_only(self):
        self.listd.request("register", registration="shelf-row", contentConfiguration={"type": "sidebarCell", "text": "{{item}}"},
                           accessories=[{"type": "outlineDisclosure"}])
        self.listd.request("applySectionSnapshot", dataSource="shared-outline", section="shelf", snapshot={"items": [
            {"id": "fiction", "children": ["dune", "emma"]}, "atlas"]})
        self.listd.request("setCellProvider", dataSource="shared-outline", rules=[], default="shelf-row")
        version = self.listd.request("numberOfSections", dataSource="shared-outline")["version"]
        page = self.page(self.actor, "/sources/shared-outline")
        refusal = page.evaluate("""window.listweb.socket.request("expand", {dataSource: "shared-outline", section: "shelf", items: ["fiction"]})
            .then(() => "passed", (error) => error.code + ": " + error.message)""")
        assert refusal.startswith("permission-denied") and "own view" in refusal, refusal
        refusal = page.evaluate("""window.listweb.socket.request("reorder", {view: window.listweb.viewName, item: "atlas", beforeItem: "fiction"})
            .then(() => "passed", (error) => error.code)""")
        assert refusal == "permission-denied", refusal
        # Clicking the disclosure says why nothing happens.
        page.click(".cell[data-item='fiction'] .accessory.outline")
        page.wait_for_function("document.getElementById('status').textContent.includes('shared')", timeout=20000)
        assert self.listd.request("numberOfSections", dataSource="shared-outline")["version"] == version, "the shared outline changed"
        assert "dune" not in self.listd.sections("shared-outline")[0][1]
        # Its own selection still changes.
        selected = page.evaluate("""window.listweb.socket.request("setState", {view: window.listweb.viewName, item: "atlas", state: {selected: true}})
            .then(() => "passed", (error) => error.code)""")
        assert selected == "passed", selected
        page.context.close()

    def pages_beyond_the_limit_get_a_503(self):
        listweb = self.listweb("--max-pages", "2")
        first, second = self.page(listweb, "/sources/home"), self.page(listweb, "/sources/emoji")
        status, _, body = listweb.get("/sources/outline")
        assert status == 503 and b"listweb is full" in body and b"--max-pages" in body, (status, body)
        token = {"Authorization": f"Bearer {listweb.token}"}
        assert " 101 " not in listweb.upgrade("/sources/outline/socket", token), "a third page's WebSocket"
        # listweb's own requests to listd still work, and listd still takes its user's listctl.
        status, _, body = listweb.get("/metrics", token)
        assert status == 200 and b"listd_up 1" in body and b"listweb_pages_refused 2" in body, body[-600:]
        listctl = os.path.join(self.arguments.bin, "listctl")
        result = subprocess.run([listctl, "--socket", self.listd.socket_path, "ping"], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        first.context.close()
        wait_until(lambda: listweb.get("/sources/outline")[0] == 200, "a place once a page closed")
        second.context.close()

    def a_large_grid_page_is_drawn(self):
        items = [f"g{index}" for index in range(8000)]
        self.listd.request("apply", dataSource="grid", snapshot={"sections": [{"id": "s", "items": items}]})
        self.listd.request("setLayout", dataSource="grid", layout={"default": {
            "item": {"width": {"fractionalWidth": 1 / 200}, "height": {"fractionalHeight": 1}},
            "group": {"axis": "horizontal", "width": {"fractionalWidth": 1}, "height": {"absolute": 1}, "count": 200}}})
        page = self.page(self.reader, "/sources/grid", width=1400, height=900)
        page.wait_for_function("document.querySelectorAll('.cell:not(.placeholder)').length >= 3000", timeout=30000)
        # One message of 600 KB (below the documented 1 MiB) passes; the page stays connected.
        reply = page.evaluate("""window.listweb.socket.request("ping", {padding: "x".repeat(600000)})
            .then(() => "answered", (error) => error.code || error.message)""")
        assert reply in ("answered", "invalid-argument"), reply
        assert page.evaluate("window.listweb.socket.closed") is False
        page.screenshot(path=os.path.join(self.arguments.artifacts, "grid.png"))
        page.context.close()

    def names_that_read_otherwise_are_escaped(self):
        name = "invoice\u202egnp.exe"
        self.listd.request("apply", dataSource=name, snapshot={"sections": [{"id": "s", "items": ["a"]}]})
        page = self.page(self.reader, "/sources/" + urllib.parse.quote(name, safe=""))
        assert page.evaluate("document.getElementById('title').textContent") == "invoice\\u202Egnp.exe"
        assert page.title() == "invoice\\u202Egnp.exe · listweb", page.title()
        page.goto(self.reader.base + "/")
        page.wait_for_selector("#sources tbody tr", timeout=20000)
        shown = page.inner_text("#sources")
        assert "invoice\\u202Egnp.exe" in shown and "\u202e" not in shown, shown
        page.context.close()

    def idle_connections_do_not_keep_the_token_holder_out(self):
        def few_descriptors():
            resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))

        listweb = self.listweb("--max-connections-per-peer", "100", "--header-timeout", "2", preexec_fn=few_descriptors)
        idle = []
        try:
            for _ in range(400):
                connection = socket.socket()
                connection.setblocking(False)
                connection.connect_ex((listweb.host, listweb.port))
                idle.append(connection)
            time.sleep(0.5)
            before = cpu_seconds(listweb.process.pid)
            started = time.monotonic()
            token = {"Authorization": f"Bearer {listweb.token}"}
            for path in ["/healthz", "/", "/api/sources"]:
                status, _, _ = listweb.get(path, token)
                assert status == 200, f"{path}: {status}"
            assert time.monotonic() - started < 5, "the token holder waited"
            time.sleep(1)
            busy = (cpu_seconds(listweb.process.pid) - before) / (time.monotonic() - started)
            assert busy < 0.5, f"listweb used {busy:.0%} of a core with idle connections open"
        finally:
            for connection in idle:
                connection.close()
        # A connection that starts a head and never ends it is closed after the header timeout.
        with socket.create_connection((listweb.host, listweb.port), timeout=10) as connection:
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            started = time.monotonic()
            assert connection.recv(1) == b"", "the connection stayed open"
            assert time.monotonic() - started < 5


def main():
    run_checks(SecurityChecks, lambda checks: [
        checks.the_token_never_reaches_another_port, checks.a_program_on_the_port_never_gets_the_token,
        checks.images_come_only_from_named_origins,
        checks.a_page_changes_its_own_view_only, checks.pages_beyond_the_limit_get_a_503,
        checks.a_large_grid_page_is_drawn, checks.names_that_read_otherwise_are_escaped,
        checks.idle_connections_do_not_keep_the_token_holder_out])


if __name__ == "__main__":
    main()
