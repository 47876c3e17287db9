#!/usr/bin/env python3
"""listweb in a real browser: Debian's chromium driven by Playwright.

Starts a listd (ephemeral, with the demo) and two listwebs (read-only, and with --allow-actions) on
sockets and ports of their own, then checks what a person sees: the Home screen's sections laid out as the
seeds draw them, a sideways row that scrolls, changes made with listctl and 200 random ones arriving
without a reload and in the right place, the emoji outline expanding in its own view, text that looks like
HTML shown as text, the token and Origin rules, and /metrics parsed by a Prometheus text parser.
(listweb_security_test.py checks where the token goes, the limits, and what a page may change.)
Screenshots of the demo's pages go to the artifacts directory.

    listweb_test.py --bin .build/debug --artifacts .build/artifacts/listweb

Exit status 0 when every check passes; each failure is printed.
"""

import argparse
import http.client
import json
import os
import random
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse

from playwright.sync_api import sync_playwright
from prometheus_client.parser import text_string_to_metric_families

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def wait_until(condition, what, timeout=20.0):
    """Polls `condition` until it is true (returns its value) or fails with `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Listd:
    """A listd on a socket in `directory`, with a line client for the test's own requests."""

    def __init__(self, binary, directory):
        self.binary = binary
        self.socket_path = os.path.join(directory, "listd.sock")
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [self.binary, "--ephemeral", "--demo", "--socket", self.socket_path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.connection = socket.socket(socket.AF_UNIX)
        wait_until(lambda: self.connection.connect_ex(self.socket_path) == 0, "a connection to listd")
        self.buffer = b""
        self.next_id = 1

    def restart(self):
        """Kills listd (as a crash would) and starts it again on the same socket."""
        self.process.kill()
        self.process.wait()
        self.connection.close()
        self.start()

    def request(self, command, **members):
        request_id = self.next_id
        self.next_id += 1
        self.connection.sendall(json.dumps({"id": request_id, "cmd": command, **members}).encode() + b"\n")
        while True:
            while b"\n" not in self.buffer:
                ready, _, _ = select.select([self.connection], [], [], 20)
                if not ready:
                    raise AssertionError(f"listd did not answer {command}")
                self.buffer += self.connection.recv(1 << 20)
            line, self.buffer = self.buffer.split(b"\n", 1)
            reply = json.loads(line)
            if reply.get("id") == request_id:
                if not reply.get("ok"):
                    raise AssertionError(f"{command} refused: {reply.get('error')}")
                return reply["result"]

    def sections(self, data_source):
        """[[section, [items]]] as listd holds them."""
        snapshot = self.request("snapshot", dataSource=data_source)
        return [[section["id"], [item if isinstance(item, str) else item["id"] for item in section["items"]]] for section in snapshot["sections"]]

    def stop(self):
        self.process.kill()
        self.process.wait()


class Listweb:
    """A listweb for `listd`, on a free port; `url` is the one it printed (with its token in the fragment)."""

    def __init__(self, binary, listd, *arguments, port=0, token=None, preexec_fn=None):
        self.binary, self.listd, self.arguments, self.preexec_fn = binary, listd, arguments, preexec_fn
        # Without --token-file, listweb keeps its token in a state directory: the test's own, never the
        # home directory's (the same one on a restart, so the token survives it).
        self.state = [] if "--token-file" in arguments else ["--state-directory", tempfile.mkdtemp(prefix="listweb-state-", dir=os.path.dirname(listd.socket_path))]
        self.start(port, token)

    def start(self, port, token):
        self.process = subprocess.Popen(
            [self.binary, "--socket", self.listd.socket_path, "--port", str(port), *self.state, *self.arguments], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, preexec_fn=self.preexec_fn)
        line = self.process.stdout.readline()
        if not line.startswith("listweb: serving http://"):
            raise AssertionError(f"listweb printed {line!r}")
        served = line.split("serving ", 1)[1].split(" ")[0].strip()
        parsed = urllib.parse.urlparse(served)
        self.base = f"{parsed.scheme}://{parsed.netloc}"
        self.host, self.port = parsed.hostname, parsed.port
        self.printed = served
        self.token = token or urllib.parse.parse_qs(parsed.fragment)["token"][0]
        self.url = f"{self.base}/#token={self.token}"

    def restart(self):
        """Kills listweb and starts it again on the same port (a token file keeps the token)."""
        self.stop()
        self.start(self.port, self.token)

    def get(self, path, headers=None):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=20)
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
        connection.close()
        return response.status, dict(response.getheaders()), body

    def upgrade(self, path, headers):
        """The status line of a WebSocket upgrade request with `headers`."""
        with socket.create_connection((self.host, self.port), timeout=20) as connection:
            lines = [f"GET {path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Upgrade: websocket", "Connection: Upgrade",
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
            lines += [f"{name}: {value}" for name, value in headers.items()]
            connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            return connection.recv(4096).split(b"\r\n", 1)[0].decode()

    def stop(self):
        self.process.kill()
        self.process.wait()


class Checks:
    def __init__(self, arguments):
        self.arguments = arguments
        self.failures = []
        self.passed = 0
        self.directory = tempfile.mkdtemp(prefix="listweb-test-")
        os.makedirs(arguments.artifacts, exist_ok=True)
        self.listd = Listd(os.path.join(arguments.bin, "listd"), self.directory)
        self.reader = Listweb(os.path.join(arguments.bin, "listweb"), self.listd)
        self.actor = Listweb(os.path.join(arguments.bin, "listweb"), self.listd, "--allow-actions")
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])

    def close(self):
        self.browser.close()
        self.playwright.stop()
        self.reader.stop()
        self.actor.stop()
        self.listd.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def run(self, check):
        try:
            check()
            self.passed += 1
            print(f"ok   {check.__name__}")
        except Exception:  # noqa: BLE001 - every failure is reported, the others still run
            self.failures.append(check.__name__)
            print(f"FAIL {check.__name__}\n{traceback.format_exc()}")

    def page(self, listweb, path, width=420, height=900):
        """A new page (own storage) that opened `path` with listweb's token in the fragment, until its view
        is attached; dialogs (an alert a script would raise) are recorded on it."""
        # Playwright evaluates its waits with eval, which listweb's Content-Security-Policy forbids to
        # the page's own scripts: the test's are let through (the header itself is checked apart).
        context = self.browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
        page = context.new_page()
        page.dialogs = []
        page.errors = []
        page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.goto(f"{listweb.base}{path}#token={listweb.token}")
        page.wait_for_function("window.listweb && window.listweb.ready", timeout=20000)
        return page

    def wait_for_version(self, page, data_source):
        version = self.listd.request("numberOfSections", dataSource=data_source)["version"]
        page.wait_for_function(f"window.listweb.version === {version}", timeout=20000)
        return version

    # MARK: Checks

    def the_token_is_required(self):
        # Everything with data needs the token; the pages' files (the same for everyone) do not.
        for path in ["/api/sources", "/api/info", "/metrics", "/healthz", "/sources/home/socket"]:
            status, headers, _ = self.reader.get(path)
            assert status == 401, f"{path} without a token: {status}"
            status, _, _ = self.reader.get(path, {"Authorization": "Bearer " + "0" * 64})
            assert status == 401, f"{path} with a wrong token: {status}"
            # The query carries it only in a WebSocket's address.
            status, _, _ = self.reader.get(f"{path}?token={self.reader.token}")
            assert status == 401, f"{path} with the token in the query: {status}"
        for path in ["/", "/sources/home", "/static/view.js"]:
            status, headers, body = self.reader.get(path)
            assert status == 200 and self.reader.token.encode() not in body, f"{path}: {status}"
        status, headers, _ = self.reader.get("/api/sources", {"Authorization": f"Bearer {self.reader.token}"})
        assert status == 200 and "Set-Cookie" not in headers, (status, headers)
        # A cookie of an earlier listweb is cleared.
        status, headers, _ = self.reader.get("/", {"Cookie": "listweb_token=" + self.reader.token})
        assert "Max-Age=0" in headers.get("Set-Cookie", ""), headers
        assert "script-src 'self'" in headers["Content-Security-Policy"], headers

    def the_websocket_needs_the_token_and_listwebs_origin(self):
        path = "/sources/home/socket"
        own = f"http://{self.reader.host}:{self.reader.port}"
        # Refused before any upgrade (the WebSocket library answers a refused upgrade with 400).
        without = self.reader.upgrade(path, {"Origin": own})
        assert " 101 " not in without and without.startswith("HTTP/1.1 4"), f"an upgrade without the token: {without}"
        token = {"Authorization": f"Bearer {self.reader.token}"}
        assert " 101 " in self.reader.upgrade(path, {**token, "Origin": own}), "an upgrade from listweb's own page"
        # What a page does: the token in the WebSocket's address.
        assert " 101 " in self.reader.upgrade(f"{path}?token={self.reader.token}", {"Origin": own}), "an upgrade with ?token="
        refused = self.reader.upgrade(path, {**token, "Origin": "http://evil.example"})
        assert " 101 " not in refused, f"an upgrade from another origin: {refused}"

    def the_home_screen_is_laid_out_as_the_seed(self):
        page = self.page(self.reader, "/sources/home")
        page.wait_for_function("document.querySelectorAll('.cell:not(.placeholder)').length >= 4", timeout=20000)
        boxes = page.evaluate("""() => [...document.querySelectorAll('section')].map(section => ({
            id: section.dataset.section, top: section.getBoundingClientRect().top,
            cells: [...section.querySelectorAll(':scope > .items > .cell')].map(cell => {
                const r = cell.getBoundingClientRect(); return {item: cell.dataset.item, x: r.left, y: r.top, width: r.width, height: r.height};
            }),
            scrolls: section.querySelector('.items').scrollWidth > section.querySelector('.items').clientWidth,
        }))""")
        assert [section["id"] for section in boxes] == ["consult", "company", "expert"], boxes
        assert boxes[0]["top"] < boxes[1]["top"] < boxes[2]["top"], "the sections one under the other"
        consult, company, expert = boxes
        # Consult cards: as wide as the collection (the window's width, up to 768 points), 200 high, one
        # under the other.
        width = page.evaluate("document.getElementById('collection').getBoundingClientRect().width")
        for cell in consult["cells"]:
            assert abs(cell["width"] - width) <= 1 and abs(cell["height"] - 200) <= 1, (width, cell)
        assert consult["cells"][1]["y"] >= consult["cells"][0]["y"] + 200
        # Companies: 350 × 200 cards side by side in a row that scrolls sideways.
        first, second = company["cells"][:2]
        assert abs(first["width"] - 350) <= 1 and abs(first["height"] - 200) <= 1, first
        assert abs(second["y"] - first["y"]) <= 1 and second["x"] > first["x"] + 350, (first, second)
        assert company["scrolls"], "the company row scrolls sideways"
        # Experts: 150-point-wide cards side by side.
        assert all(abs(cell["width"] - 150) <= 1 for cell in expert["cells"]), expert
        assert abs(expert["cells"][1]["y"] - expert["cells"][0]["y"]) <= 1
        texts = page.evaluate("[...document.querySelectorAll('section[data-section=consult] .cell .text')].map(t => t.textContent)")
        assert texts and texts[0] == "감기에 걸렸을때 어느 병원으로 가야할까요?", texts
        page.screenshot(path=os.path.join(self.arguments.artifacts, "home.png"))
        page.context.close()

    def a_sideways_row_scrolls(self):
        page = self.page(self.reader, "/sources/home")
        row = "document.querySelector('section[data-section=company] .items')"
        page.wait_for_function(f"{row}.scrollWidth > {row}.clientWidth", timeout=20000)
        page.evaluate(f"{row}.scrollBy({{left: 1000}})")
        page.wait_for_function(f"{row}.scrollLeft > 0", timeout=20000)
        # The second card came on screen: its cell was dequeued (text, not a placeholder).
        page.wait_for_function(
            "(() => { const c = document.querySelector('.cell[data-item=\"company-2\"]'); return c && !c.classList.contains('placeholder') && c.textContent.length > 0; })()",
            timeout=20000)
        page.context.close()

    def changes_arrive_live_in_the_right_place(self):
        sections = [{"id": f"s{index}", "items": [f"i{index}-{item}" for item in range(6)]} for index in range(4)]
        self.listd.request("apply", dataSource="live", snapshot={"sections": sections})
        page = self.page(self.reader, "/sources/live", height=2400)
        page.evaluate("window.notReloaded = true")
        applied_before = page.evaluate("window.listweb.changesApplied")
        # One change with listctl, as a person would make it.
        listctl = os.path.join(self.arguments.bin, "listctl")
        result = subprocess.run([listctl, "--socket", self.listd.socket_path, "append-items", "live", "from-listctl", "--to-section", "s1"],
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        self.wait_for_version(page, "live")
        order = page.evaluate("window.listweb.domOrder()")
        assert order == self.listd.sections("live") and "from-listctl" in order[1][1], order
        # 200 random mutations of every kind.
        generator = random.Random(34)
        counter = 0
        for _ in range(200):
            current = self.listd.sections("live")
            items = [item for _, section_items in current for item in section_items]
            ids = [section for section, _ in current]
            kind = generator.choice(["append", "insert", "delete", "move", "reload", "reconfigure", "moveSection", "appendSection", "deleteSection"])
            counter += 1
            if kind == "append" or not items:
                self.listd.request("appendItems", dataSource="live", items=[f"n{counter}"], toSection=generator.choice(ids))
            elif kind == "insert":
                self.listd.request("insertItems", dataSource="live", items=[f"n{counter}", f"m{counter}"], beforeItem=generator.choice(items))
            elif kind == "delete":
                self.listd.request("deleteItems", dataSource="live", items=generator.sample(items, min(len(items), generator.randint(1, 3))))
            elif kind == "move" and len(items) > 1:
                item, target = generator.sample(items, 2)
                self.listd.request("moveItem", dataSource="live", item=item, afterItem=target)
            elif kind == "reload":
                self.listd.request("reloadItems", dataSource="live", items=[generator.choice(items)])
            elif kind == "reconfigure":
                self.listd.request("reconfigureItems", dataSource="live", items=[generator.choice(items)])
            elif kind == "moveSection" and len(ids) > 1:
                section, target = generator.sample(ids, 2)
                self.listd.request("moveSection", dataSource="live", section=section, beforeSection=target)
            elif kind == "deleteSection" and len(ids) > 2:
                self.listd.request("deleteSections", dataSource="live", sections=[generator.choice(ids)])
            else:
                self.listd.request("appendSections", dataSource="live", sections=[f"t{counter}"])
                self.listd.request("appendItems", dataSource="live", items=[f"t{counter}-a", f"t{counter}-b"], toSection=f"t{counter}")
        version = self.wait_for_version(page, "live")
        order = page.evaluate("window.listweb.domOrder()")
        assert order == self.listd.sections("live"), f"the page shows {order}, listd holds {self.listd.sections('live')}"
        assert page.evaluate("window.notReloaded === true"), "the page was reloaded"
        applied = page.evaluate("window.listweb.changesApplied") - applied_before
        assert applied >= 200, f"{applied} changes applied one by one (version {version})"
        # What is on screen was dequeued: no placeholder left in view.
        page.wait_for_function("""[...document.querySelectorAll('.cell')].filter(c => { const r = c.getBoundingClientRect();
            return r.bottom > 60 && r.top < innerHeight; }).every(c => !c.classList.contains('placeholder'))""", timeout=20000)
        assert not page.errors, page.errors
        page.context.close()

    def animation_follows_the_change(self):
        self.listd.request("apply", dataSource="animated", snapshot={"sections": [{"id": "s", "items": ["a", "b", "c"]}]})
        page = self.page(self.reader, "/sources/animated")
        before = page.evaluate("window.listweb.animationsStarted")
        self.listd.request("moveItem", dataSource="animated", item="a", afterItem="c")
        self.wait_for_version(page, "animated")
        assert page.evaluate("window.listweb.lastChangeAnimated") is True
        after = page.evaluate("window.listweb.animationsStarted")
        assert after > before, "an animated change animates"
        self.listd.request("moveItem", dataSource="animated", item="a", beforeItem="b", animatingDifferences=False)
        self.wait_for_version(page, "animated")
        assert page.evaluate("window.listweb.lastChangeAnimated") is False
        assert page.evaluate("window.listweb.animationsStarted") == after, "a change without animation does not animate"
        assert page.evaluate("window.listweb.domOrder()") == [["s", ["a", "b", "c"]]]
        page.context.close()

    def html_in_data_is_shown_as_text(self):
        hostile = "<img src=x onerror=alert(1)>"
        self.listd.request("register", registration="titled", contentConfiguration={"type": "cell", "text": "{{title}}", "image": "{{image}}"})
        # An image on listweb's own host (any port) would be sent listweb's cookie: drawn as text instead.
        self.listd.request("apply", dataSource="hostile", snapshot={"sections": [{"id": "s", "items": [
            {"id": "x", "data": {"title": hostile, "image": "javascript:alert(2)"}},
            {"id": "y", "data": {"title": "local", "image": f"http://{self.reader.host}:9/steal.png"}}]}]})
        self.listd.request("setCellProvider", dataSource="hostile", rules=[], default="titled")
        page = self.page(self.reader, "/sources/hostile")
        page.wait_for_function("document.querySelector('.cell[data-item=\"x\"] .text') !== null", timeout=20000)
        text = page.evaluate("document.querySelector('.cell[data-item=\"x\"] .text').textContent")
        assert text == hostile, text
        page.wait_for_function("document.querySelector('.cell[data-item=\"y\"] .symbol') !== null", timeout=20000)
        assert page.evaluate("document.querySelectorAll('#collection img').length") == 0, "no element made from the data"
        # Both cells are drawn and nothing made from the data could run a script: no dialog came.
        assert page.dialogs == [], page.dialogs
        page.context.close()

    def the_emoji_outline_expands_in_its_own_view(self):
        page = self.page(self.actor, "/sources/emoji")
        smileys = ".cell[data-item=\"smileys\"] .accessory.outline"
        page.wait_for_selector(smileys, timeout=20000)
        page.click(smileys)
        page.wait_for_function("window.listweb.domOrder()[0][1].includes('smileys/😀')", timeout=20000)
        # Only in this view: listd's own outline stays collapsed.
        assert "smileys/😀" not in self.listd.sections("emoji")[0][1]
        page.screenshot(path=os.path.join(self.arguments.artifacts, "emoji.png"))
        page.context.close()
        # A read-only listweb refuses the action.
        page = self.page(self.reader, "/sources/emoji")
        page.wait_for_selector(smileys, timeout=20000)
        page.click(smileys)
        # The page says why nothing happens (listweb would refuse the request too: RelayPolicyTests).
        page.wait_for_function("document.getElementById('status').textContent.includes('read-only')", timeout=20000)
        assert "smileys/😀" not in page.evaluate("window.listweb.domOrder()")[0][1]
        page.context.close()

    def badges_sit_on_their_items_and_headers_stay_pinned(self):
        self.listd.request("register", registration="shop-card", contentConfiguration={"type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{count}}"})
        self.listd.request("register", registration="shop-badge", kind="supplementary", elementKind="badge",
                           contentConfiguration={"type": "cell", "text": "{{new}}", "textProperties": {"color": "systemRed"}})
        self.listd.request("register", registration="shop-header", kind="supplementary", elementKind="header", contentConfiguration={"type": "plainHeader", "text": "Aisle"})
        items = [{"id": f"a{index}", "data": {"title": f"Shelf {index}", "count": f"{index} items", **({"new": 3} if index == 0 else {})}} for index in range(30)]
        self.listd.request("apply", dataSource="shop", snapshot={"sections": [
            {"id": "aisle-1", "items": items}, {"id": "aisle-2", "items": [f"b{index}" for index in range(30)]}]})
        self.listd.request("setCellProvider", dataSource="shop", rules=[], default="shop-card")
        self.listd.request("setSupplementaryProvider", dataSource="shop", elementKind="badge", rules=[], default="shop-badge")
        self.listd.request("setSupplementaryProvider", dataSource="shop", elementKind="header", rules=[], default="shop-header")
        self.listd.request("setLayout", dataSource="shop", layout={"default": {
            "item": {"width": {"fractionalWidth": 1}, "height": {"fractionalHeight": 1}, "supplementaryItems": [
                {"elementKind": "badge", "width": {"absolute": 3}, "height": {"absolute": 1},
                 "containerAnchor": {"edges": ["top", "trailing"], "fractionalOffset": {"x": 0.3, "y": -0.3}}}]},
            "group": {"axis": "horizontal", "width": {"fractionalWidth": 0.8}, "height": {"absolute": 2}},
            "interGroupSpacing": 1, "header": {"pinToVisibleBounds": True}}})
        page = self.page(self.reader, "/sources/shop", height=700)
        badge = ".cell[data-item=\"a0\"] .badge"
        page.wait_for_function(f"(() => {{ const b = document.querySelector('{badge}'); return b && !b.hidden && b.textContent === '3'; }})()", timeout=20000)
        # The badge sits on its item's top trailing corner (anchored, offset outwards by 30 % of its size).
        corner = page.evaluate(f"""(() => {{ const cell = document.querySelector('.cell[data-item="a0"]').getBoundingClientRect();
            const badge = document.querySelector('{badge}').getBoundingClientRect();
            return {{cellRight: cell.right, cellTop: cell.top, left: badge.left, right: badge.right, top: badge.top, bottom: badge.bottom}}; }})()""")
        assert corner["left"] < corner["cellRight"] < corner["right"] and corner["top"] < corner["cellTop"] < corner["bottom"], corner
        # An item without the data shows no badge; a change to the data reaches the badge live.
        page.wait_for_function("document.querySelector('.cell[data-item=\"a1\"]:not(.placeholder)') !== null", timeout=20000)
        assert page.evaluate("[...document.querySelectorAll('.cell[data-item=\"a1\"] .badge')].every(b => b.hidden)"), "an empty badge is hidden"
        self.listd.request("updateItems", dataSource="shop", items=[{"id": "a0", "data": {"title": "Shelf 0", "count": "0 items", "new": 4}}])
        page.wait_for_function(f"document.querySelector('{badge}').textContent === '4'", timeout=20000)
        # Scrolled into the first section, its header stays under the bar; the second section's does not.
        page.wait_for_function("document.querySelector('section[data-section=\"aisle-1\"] .supplementary.header').textContent.includes('Aisle')", timeout=20000)
        page.evaluate("window.scrollBy(0, 900)")
        page.wait_for_function("window.scrollY >= 900", timeout=20000)
        positions = page.evaluate("""(() => { const bar = document.querySelector('.bar').getBoundingClientRect().bottom;
            const section = document.querySelector('section[data-section="aisle-1"]');
            const header = section.querySelector('.supplementary.header').getBoundingClientRect();
            const other = document.querySelector('section[data-section="aisle-2"] .supplementary.header').getBoundingClientRect();
            return {bar, header: header.top, section: section.getBoundingClientRect().top, other: other.top}; })()""")
        assert positions["section"] < 0 and abs(positions["header"] - positions["bar"]) <= 2, positions
        assert positions["other"] > positions["header"] + 100, positions
        page.screenshot(path=os.path.join(self.arguments.artifacts, "badges.png"))
        page.context.close()

    def a_name_that_needs_escaping_has_its_page(self):
        self.listd.request("apply", dataSource="my list/é", snapshot={"sections": [{"id": "s", "items": ["a"]}]})
        page = self.page(self.reader, "/sources/" + urllib.parse.quote("my list/é", safe=""))
        assert page.evaluate("window.listweb.domOrder()") == [["s", ["a"]]]
        page.context.close()

    def the_outline_screen_and_the_index(self):
        page = self.page(self.reader, "/sources/outline")
        page.wait_for_function("document.querySelectorAll('.cell:not(.placeholder)').length >= 3", timeout=20000)
        assert page.evaluate("window.listweb.domOrder()")[0][0] == "recents"
        page.screenshot(path=os.path.join(self.arguments.artifacts, "outline.png"))
        page.goto(self.reader.base + "/")
        page.wait_for_function("document.querySelectorAll('#sources tbody tr').length >= 3", timeout=20000)
        names = page.evaluate("[...document.querySelectorAll('#sources tbody tr td:first-child')].map(td => td.textContent)")
        assert {"home", "emoji", "outline"} <= set(names), names
        page.context.close()

    def views_come_back_after_listd_restarts(self):
        page = self.page(self.reader, "/sources/home")
        page.evaluate("window.notReloaded = true")
        page.wait_for_function("document.querySelectorAll('.cell:not(.placeholder)').length >= 2", timeout=20000)
        self.listd.restart()
        # Another incarnation: the page attaches anew on its own, without a reload, and shows it again.
        page.wait_for_function("window.listweb.ready && window.listweb.incarnation && document.querySelectorAll('.cell:not(.placeholder)').length >= 2",
                               timeout=30000)
        self.listd.request("appendItems", dataSource="home", items=["after-restart"], toSection="consult")
        self.wait_for_version(page, "home")
        assert page.evaluate("window.listweb.domOrder()") == self.listd.sections("home")
        assert page.evaluate("window.notReloaded === true"), "the page was reloaded"
        page.context.close()

    def views_resume_after_listweb_restarts(self):
        token_file = os.path.join(self.directory, "token")
        with open(os.open(token_file, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600), "w") as file:
            file.write("resume-token-" + "7" * 40 + "\n")
        listweb = Listweb(os.path.join(self.arguments.bin, "listweb"), self.listd, "--token-file", token_file, token="resume-token-" + "7" * 40)
        try:
            self.listd.request("apply", dataSource="resumed", snapshot={"sections": [{"id": "s", "items": ["a", "b"]}]})
            page = self.page(listweb, "/sources/resumed")
            page.evaluate("window.notReloaded = true")
            applied = page.evaluate("window.listweb.changesApplied")
            listweb.stop()
            # A change while listweb is away arrives once it is back: resumed from the page's version.
            self.listd.request("appendItems", dataSource="resumed", items=["while-away"], toSection="s")
            listweb.start(listweb.port, listweb.token)
            self.wait_for_version(page, "resumed")
            assert page.evaluate("window.listweb.domOrder()") == [["s", ["a", "b", "while-away"]]]
            assert page.evaluate("window.listweb.changesApplied") == applied + 1, "resumed: the missed change applied, not a new snapshot"
            assert page.evaluate("window.notReloaded === true"), "the page was reloaded"
            page.context.close()
        finally:
            listweb.stop()

    def metrics_parse_as_prometheus_text(self):
        status, headers, body = self.reader.get("/metrics", {"Authorization": f"Bearer {self.reader.token}"})
        assert status == 200 and headers["Content-Type"].startswith("text/plain"), (status, headers)
        families = {family.name: family for family in text_string_to_metric_families(body.decode())}
        assert families["listd_up"].samples[0].value == 1, families["listd_up"]
        requests = {sample.labels.get("command") for sample in families["listd_requests"].samples}
        assert {"attach", "dequeue"} <= requests, requests
        assert "listd_events_sent" in families and "listd_data_source_items" in families, sorted(families)
        assert "listweb_pages" in families and "listweb_listd_request_duration_seconds" in families, sorted(families)
        status, _, body = self.reader.get("/healthz", {"Authorization": f"Bearer {self.reader.token}"})
        assert status == 200 and body == b"ok\n", (status, body)


def run_checks(checks_class, checks_of):
    """The command line of a browser script: makes `checks_class` (a Checks) from --bin and --artifacts, runs
    the checks `checks_of(checks)` lists, prints 'N passed, N failed' and exits non-zero on a failure."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="where listd, listweb and listctl are")
    parser.add_argument("--artifacts", required=True, help="where the screenshots go")
    checks = checks_class(parser.parse_args())
    try:
        for check in checks_of(checks):
            checks.run(check)
    finally:
        checks.close()
    print(f"{checks.passed} passed, {len(checks.failures)} failed" + (f": {', '.join(checks.failures)}" if checks.failures else ""))
    sys.exit(1 if checks.failures else 0)


def main():
    run_checks(Checks, lambda checks: [
        checks.the_token_is_required, checks.the_websocket_needs_the_token_and_listwebs_origin,
        checks.the_home_screen_is_laid_out_as_the_seed, checks.a_sideways_row_scrolls,
        checks.changes_arrive_live_in_the_right_place, checks.animation_follows_the_change,
        checks.html_in_data_is_shown_as_text, checks.the_emoji_outline_expands_in_its_own_view,
        checks.the_outline_screen_and_the_index, checks.badges_sit_on_their_items_and_headers_stay_pinned,
        checks.a_name_that_needs_escaping_has_its_page,
        checks.views_resume_after_listweb_restarts,
        checks.metrics_parse_as_prometheus_text, checks.views_come_back_after_listd_restarts])


if __name__ == "__main__":
    main()
