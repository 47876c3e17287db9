#!/usr/bin/env python3
"""listweb under load: 100 views (99 WebSocket clients and one page in Chromium) of one data source while a
writer makes 1,000 changes a second. Reports listweb's CPU per event it delivered and the end-to-end
latency from a write to the change showing in the real browser's DOM (p50, p99).

    python3 Benchmarks/listweb/listweb_bench.py --bin .build/release [--seconds 10] [--rate 1000] [--views 100]

Run by hand (never in CI, never timed in tests); the figures go in notes and the README.
"""

import argparse
import base64
import json
import os
import shutil
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Browser"))
from listweb_test import Listd, Listweb, wait_until  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


class WebSocketClient:
    """A minimal WebSocket client (RFC 6455): enough to attach through listweb and count what arrives."""

    def __init__(self, listweb, path):
        self.connection = socket.create_connection((listweb.host, listweb.port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {path} HTTP/1.1\r\nHost: {listweb.host}:{listweb.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {listweb.token}\r\n\r\n")
        self.connection.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            response += self.connection.recv(4096)
        head, self.buffer = response.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"no upgrade: {head[:80]}")

    def send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        length = len(payload)
        if length < 126:
            header += bytes([0x80 | length])
        elif length < 65536:
            header += bytes([0x80 | 126]) + length.to_bytes(2, "big")
        else:
            header += bytes([0x80 | 127]) + length.to_bytes(8, "big")
        self.connection.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def fileno(self):
        return self.connection.fileno()


def drain(clients, stop):
    """Reads and drops what listweb sends to every client, on one thread: the load's own CPU stays small
    (frames are not parsed; listweb's /metrics counts the lines it relayed). Returns the bytes read."""
    selector = selectors.DefaultSelector()
    for client in clients:
        client.connection.setblocking(False)
        selector.register(client.connection, selectors.EVENT_READ)
    received = 0
    buffer = bytearray(1 << 18)
    while not stop.is_set():
        for key, _ in selector.select(timeout=0.2):
            try:
                received += key.fileobj.recv_into(buffer)
            except BlockingIOError:
                pass
    return received


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metric(listweb, name):
    _, _, body = listweb.get("/metrics", {"Authorization": f"Bearer {listweb.token}"})
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--views", type=int, default=100)
    arguments = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="listweb-bench-")
    listd = Listd(os.path.join(arguments.bin, "listd"), directory)
    listweb = Listweb(os.path.join(arguments.bin, "listweb"), listd)
    try:
        sections = [{"id": f"s{index}", "items": [f"i{index}-{item}" for item in range(50)]} for index in range(4)]
        listd.request("apply", dataSource="bench", snapshot={"sections": sections})
        clients = []
        for _ in range(arguments.views - 1):
            client = WebSocketClient(listweb, "/sources/bench/socket")
            client.send(json.dumps({"id": 1, "cmd": "attach", "dataSource": "bench"}))
            clients.append(client)
        stop_draining = threading.Event()
        drained = {}
        drainer = threading.Thread(target=lambda: drained.setdefault("bytes", drain(clients, stop_draining)), daemon=True)
        drainer.start()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_context(viewport={"width": 420, "height": 900}, bypass_csp=True).new_page()
            page.goto(listweb.url)
            page.goto(listweb.base + "/sources/bench")
            page.wait_for_function("window.listweb && window.listweb.ready", timeout=20000)
            # When each benchmark item reaches the DOM, in wall-clock milliseconds.
            page.evaluate("""() => { window.seen = {}; new MutationObserver(records => { const now = performance.timeOrigin + performance.now();
                for (const record of records) for (const node of record.addedNodes) {
                    if (node.dataset && node.dataset.item && node.dataset.item.startsWith('b-') && !(node.dataset.item in window.seen)) window.seen[node.dataset.item] = now; } })
                .observe(document.getElementById('collection'), {childList: true, subtree: true}); }""")
            writer = socket.socket(socket.AF_UNIX)
            writer.connect(listd.socket_path)
            threading.Thread(target=lambda: [None for _ in iter(lambda: writer.recv(1 << 16), b"")], daemon=True).start()
            sent = {}
            cpu_before = cpu_seconds(listweb.process.pid)
            listd_cpu_before = cpu_seconds(listd.process.pid)
            load_cpu_before = time.process_time()
            lines_before = metric(listweb, "listweb_lines_relayed")
            start = time.monotonic()
            total = int(arguments.seconds * arguments.rate)
            for index in range(total):
                due = start + index / arguments.rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                item = f"b-{index}"
                # Newest first at the top of section s0 (on screen), the oldest benchmark item goes.
                operations = [{"cmd": "insertItems", "items": [item], "beforeItem": f"b-{index - 1}" if index else "i0-0"}]
                if index >= 20:
                    operations.append({"cmd": "deleteItems", "items": [f"b-{index - 20}"]})
                sent[item] = time.time() * 1000
                writer.sendall(json.dumps({"cmd": "batch", "dataSource": "bench", "operations": operations}).encode() + b"\n")
            elapsed = time.monotonic() - start
            version = total + 1
            try:
                wait_until(lambda: page.evaluate(f"window.listweb.version >= {version}"), "the page to catch up", timeout=120)
            except AssertionError:
                state = page.evaluate("({version: window.listweb.version, applied: window.listweb.changesApplied, status: document.getElementById('status').textContent})")
                raise AssertionError(f"the page did not catch up with version {version}: {state}")
            cpu = cpu_seconds(listweb.process.pid) - cpu_before
            listd_cpu = cpu_seconds(listd.process.pid) - listd_cpu_before
            load_cpu = time.process_time() - load_cpu_before
            lines = metric(listweb, "listweb_lines_relayed") - lines_before
            seen = page.evaluate("window.seen")
            browser.close()
        stop_draining.set()
        drainer.join()
        latencies = sorted(seen[item] - sent[item] for item in seen if item in sent)
        p50 = statistics.median(latencies)
        p99 = latencies[int(len(latencies) * 0.99) - 1]
        print(json.dumps({
            "views": arguments.views, "changes": total, "changesPerSecond": round(total / elapsed), "eventsDelivered": int(lines),
            "listwebCPUSeconds": round(cpu, 3), "listwebMicrosecondsPerEvent": round(cpu / max(lines, 1) * 1e6, 2),
            "domLatencyMilliseconds": {"p50": round(p50, 2), "p99": round(p99, 2), "samples": len(latencies)},
            "listdCPUSeconds": round(listd_cpu, 3), "loadClientsCPUSeconds": round(load_cpu, 3), "wallSeconds": round(elapsed, 2),
            "clientsReceivedBytes": drained.get("bytes", 0),
        }, indent=2))
    finally:
        listweb.stop()
        listd.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
