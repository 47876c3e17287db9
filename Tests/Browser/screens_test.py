#!/usr/bin/env python3
"""The demo's screens compared with reference screenshots (issue 49, item 3).

Starts listd as scripts/demo does (ephemeral, --demo, the emoji and card plugins, the home-owner that grows
the Home screen's company row), builds the README's styled screen (`shop`) by running the commands of its
console block, starts listweb (--allow-actions, as the demo does) and, for each screen (home, emoji,
outline, styled) at each size (phone 390×844, desktop 1280×800), screenshots the viewport in Debian's
chromium and compares it with docs/screens/<screen>-<size>.png.

    screens_test.py --bin .build/debug --artifacts .build/artifacts/screens
    screens_test.py --bin .build/debug --artifacts DIR --update     (what scripts/screenshots runs)

Options: --references DIR (default: docs/screens next to this script's repository), --only NAME,…
(screens or screen-size pairs: `home`, `emoji-phone`), --update (rewrite the references that are missing
or differ beyond the tolerance; the others are left as they are, so rendering noise does not churn git),
--extra-style CSS (added to every page: what a change to listweb's style would do, e.g. that the test
fails on `.bar .home { color: #0a84ff }`).

Tolerance. A pixel differs when one of its channels (R, G, B or A) differs by more than CHANNEL_THRESHOLD
(8 of 255, about 3 %): this absorbs the blending and anti-aliasing noise of another CPU's raster code paths
(a level or two), not a colour that moved by a step one can see (#007aff to #0a84ff differs by 10). A
screen fails when more than MAX_DIFFERING_SHARE (0.02 %) of its pixels differ: 66 pixels at phone size, 205
at desktop size. The page draws the same pixels on every run (no pixel differed in 14 runs in a row), so
the allowance is only for a few edge pixels on another machine; what shows fails: the bar's "listweb" in
another blue (247 pixels) or red (457), a cell's padding 2 px wider (3,000 to 15,000), a changed word.
(A single changed glyph may stay under it: the texts are checked by listweb_test.py.)

Stability. Every screen is taken in a fresh browser context: viewport of the size, deviceScaleFactor 1,
reduced motion, light colour scheme, en-US, UTC. The plugins are connected (listd's `stats`) and the
home-owner is watching (its "watching home" line) before any page opens. What is nondeterministic by
nature is made stable as soon as the view is attached (VOLATILE: every number and hexadecimal token in the
status line, which names the view listweb names at random and the version the home-owner moves, reads 0,
then and after any later change, so its text, its width and the bar's height are the same on every run).
Then the page must be settled, checked as conditions, never a fixed pause: the view attached and at
listd's version of the data source, no pending change, `document.fonts.ready` resolved and every font
loaded, every image complete, no placeholder cell showing (each visible cell dequeued and drawn, a cell
clipped by a sideways row not counted), no `.changed` highlight, no finite Web Animation or CSS transition
running, no dequeue or prefetch waiting, and the same layout (positions and texts) on two polls in a row.
On `home` also the home-owner's fixpoint: it appends companies while a view shows the row's last one, so
the screen is settled when listd's last company is neither on screen nor near it (or the row is at the
owner's limit). Playwright also stops animations (an endless one at its start) and hides the caret for
the screenshot.

On a failure the actual screenshot, the expected one and a diff (differing pixels red over a faded
expected) go to the artifacts directory as <name>.actual.png, <name>.expected.png, <name>.diff.png, and
the share of differing pixels is printed. Images are compared in the browser (canvas), so no image library
is needed. Exit status 0 when every screen matches (or, with --update, was written).
"""

import argparse
import base64
import glob
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listweb_test import CHROMIUM, Listd, Listweb, wait_until  # noqa: E402  (after the path it is found on)

from playwright.sync_api import sync_playwright  # noqa: E402

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCES = os.path.join(REPOSITORY, "docs", "screens")
# What drew the references (written with them): a failure says when this machine's differ.
DRAWN_BY = "drawn-by.txt"
DRAWING_PACKAGES = ["chromium", "fonts-dejavu-core", "fonts-noto-cjk", "fonts-noto-color-emoji"]


def drawing_packages():
    """The installed versions of what draws the screens ("name version" lines; "name ?" when unknown)."""
    lines = []
    for package in DRAWING_PACKAGES:
        try:
            version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            version = ""
        lines.append(f"{package} {version or '?'}")
    return "\n".join(lines) + "\n"

CHANNEL_THRESHOLD = 8  # of 255: a pixel differs when one channel differs by more
MAX_DIFFERING_SHARE = 0.0002  # of the pixels: a screen fails above it (0.02 %)

SIZES = {"phone": (390, 844), "desktop": (1280, 800)}
# Screen name → data source; `styled` is the README's styled screen (its data source is read from the block).
SCREENS = ["home", "emoji", "outline", "styled"]
# Made stable: every number and every hexadecimal token (six digits or more) in these elements reads 0,
# now and after any later change (a mutation observer rewrites it before the page is drawn again). The
# status line shows the view's name (listweb's views are web-RANDOMHEX-N) and the data source's version
# (the home-owner's appends move it): with them fixed its text, and so its width and the bar's height, are
# the same on every run.
VOLATILE = ["#status"]
STABILIZE = """selectors => {
  const stabilize = element => {
    const text = element.textContent.replace(/\\b[0-9a-f]{6,}\\b|[0-9]+/gi, '0');
    if (element.textContent !== text) element.textContent = text;
  };
  for (const element of selectors.flatMap(selector => [...document.querySelectorAll(selector)])) {
    stabilize(element);
    new MutationObserver(() => stabilize(element)).observe(element, {childList: true, characterData: true, subtree: true});
  }
}"""

# The styled screen's commands: the console block (README.md or any docs/*.md) that applies this data
# source; its `$ ` lines are run as they are (ReadmeTests replays the same block), except listview.
STYLED_MARKER = re.compile(r"^listctl apply (\S+) -$", re.M)


def styled_screen():
    """(file, data source, commands) of the README's styled screen, wherever its block now is."""
    files = [os.path.join(REPOSITORY, "README.md")] + sorted(glob.glob(os.path.join(REPOSITORY, "docs", "**", "*.md"), recursive=True))
    for path in files:
        with open(path, encoding="utf-8") as file:
            text = file.read()
        for block in re.findall(r"^```console\n(.*?)^```", text, re.S | re.M):
            commands = [line[2:] for line in block.split("\n") if line.startswith("$ ")]
            if not any("listctl layout shop -" in command for command in commands):
                continue
            applied = [STYLED_MARKER.search(command.split("| ", 1)[-1]) for command in commands]
            names = [match.group(1) for match in applied if match]
            if names:
                return path, names[0], [command for command in commands if not command.startswith("listview")]
    raise AssertionError("no console block applying and laying out `shop` (the styled screen) in README.md or docs/*.md")


# In the page: the layout and texts of what is on screen (the same string twice in a row: nothing moves),
# or what it waits for while it is not settled.
SETTLED = """async () => {
  const view = window.listweb;
  if (!view || !view.ready) return {waiting: 'the view to attach'};
  if (view.pending && view.pending.length) return {waiting: 'changes to be applied'};
  await document.fonts.ready;
  if (document.fonts.status !== 'loaded') return {waiting: 'fonts'};
  if ([...document.images].some(image => !image.complete)) return {waiting: 'images'};
  if ((view.wanted && view.wanted.size) || (view.prefetchWanted && view.prefetchWanted.size) || view.flushScheduled)
    return {waiting: 'dequeues and prefetches to be sent'};
  // Any part shows: inside the viewport and every ancestor that clips (a row scrolling sideways).
  const onScreen = element => {
    const r = element.getBoundingClientRect();
    let left = Math.max(r.left, 0), top = Math.max(r.top, 0), right = Math.min(r.right, innerWidth), bottom = Math.min(r.bottom, innerHeight);
    for (let parent = element.parentElement; parent && left < right && top < bottom; parent = parent.parentElement) {
      const style = getComputedStyle(parent);
      if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
      const clip = parent.getBoundingClientRect();
      left = Math.max(left, clip.left); top = Math.max(top, clip.top); right = Math.min(right, clip.right); bottom = Math.min(bottom, clip.bottom);
    }
    return left < right && top < bottom;
  };
  const placeholders = [...document.querySelectorAll('.cell.placeholder')].filter(onScreen);
  if (placeholders.length) return {waiting: `placeholders on screen: ${placeholders.map(cell => cell.dataset.item).join(', ')}`};
  if (document.querySelector('.changed')) return {waiting: 'a change highlight'};
  // Finite animations and transitions run to their end; an endless one (a spinner) is stopped at its start
  // for the screenshot by Playwright (animations: disabled).
  const running = document.getAnimations().filter(animation => (animation.playState === 'running' || animation.playState === 'pending')
    && animation.effect && animation.effect.getComputedTiming().endTime !== Infinity);
  if (running.length) return {waiting: `${running.length} animations`};
  const boxes = [...document.querySelectorAll('body *')].filter(onScreen).map(element => {
    const r = element.getBoundingClientRect();
    return `${element.tagName}.${element.className}:${r.left},${r.top},${r.width},${r.height}:${element.childElementCount ? '' : element.textContent}`;
  });
  return {version: view.version, signature: `${scrollX},${scrollY}|${boxes.join('\\n')}`};
}"""

# In a blank page: decodes two PNGs (data: URLs), counts the pixels of which a channel differs by more than
# the threshold, and draws the diff (differing pixels red over the expected, faded).
COMPARE = """async ([actual, expected, threshold]) => {
  const decode = async url => {
    const bitmap = await createImageBitmap(await (await fetch(url)).blob(), {colorSpaceConversion: 'none', premultiplyAlpha: 'none'});
    const canvas = document.createElement('canvas');
    canvas.width = bitmap.width; canvas.height = bitmap.height;
    const context = canvas.getContext('2d', {willReadFrequently: true});
    context.drawImage(bitmap, 0, 0);
    return {width: bitmap.width, height: bitmap.height, data: context.getImageData(0, 0, bitmap.width, bitmap.height).data};
  };
  const a = await decode(actual), b = await decode(expected);
  if (a.width !== b.width || a.height !== b.height) return {size: [a.width, a.height, b.width, b.height]};
  const canvas = document.createElement('canvas');
  canvas.width = a.width; canvas.height = a.height;
  const context = canvas.getContext('2d');
  const diff = context.createImageData(a.width, a.height);
  let differing = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    const differs = Math.abs(a.data[i] - b.data[i]) > threshold || Math.abs(a.data[i + 1] - b.data[i + 1]) > threshold
      || Math.abs(a.data[i + 2] - b.data[i + 2]) > threshold || Math.abs(a.data[i + 3] - b.data[i + 3]) > threshold;
    if (differs) {
      differing += 1;
      diff.data[i] = 255; diff.data[i + 1] = 0; diff.data[i + 2] = 0;
    } else {
      const grey = 255 - (255 - (b.data[i] * 0.3 + b.data[i + 1] * 0.59 + b.data[i + 2] * 0.11)) * 0.25;
      diff.data[i] = diff.data[i + 1] = diff.data[i + 2] = grey;
    }
    diff.data[i + 3] = 255;
  }
  if (!differing) return {differing, pixels: a.width * a.height};
  context.putImageData(diff, 0, 0);
  return {differing, pixels: a.width * a.height, diff: canvas.toDataURL('image/png')};
}"""


class DemoListd(Listd):
    """listd as scripts/demo starts it: the demo data sources and the emoji and card plugins it supervises."""

    def start(self):
        bin_directory = os.path.dirname(self.binary)
        environment = {key: value for key, value in os.environ.items() if key not in ("NOTIFY_SOCKET", "LISTD_SOCKET")}
        self.process = subprocess.Popen(
            [self.binary, "--ephemeral", "--demo", "--socket", self.socket_path,
             "--plugin", os.path.join(bin_directory, "emoji-plugin"), "--plugin", os.path.join(bin_directory, "card-plugin")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
        self.connection = socket.socket(socket.AF_UNIX)
        wait_until(lambda: self.connection.connect_ex(self.socket_path) == 0, "a connection to listd")
        self.buffer = b""
        self.next_id = 1
        # Cells of plugin types are configured once their plugin is connected.
        wait_until(lambda: {"emoji", "card"} <= {plugin["name"] for plugin in self.request("stats")["plugins"]},
                   "the emoji and card plugins connected", timeout=30)


class HomeOwner:
    """The demo's home-owner on listd's socket, watching `home` (its first line says so) before any page opens."""

    LIMIT = 60  # the owner's default, as in the demo

    def __init__(self, binary, listd):
        self.process = subprocess.Popen([binary, "--socket", listd.socket_path, "--limit", str(self.LIMIT)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.output = b""
        deadline = time.monotonic() + 30
        while b"watching home" not in self.output:
            ready, _, _ = select.select([self.process.stderr], [], [], max(0, deadline - time.monotonic()))
            chunk = os.read(self.process.stderr.fileno(), 65536) if ready else b""
            if not chunk:
                raise AssertionError(f"home-owner is not watching home: {self.output.decode(errors='replace')}")
            self.output += chunk
        # Its later lines (the appends) are read on, so that it never blocks on a full pipe.
        threading.Thread(target=self.drain, daemon=True).start()

    def drain(self):
        while chunk := os.read(self.process.stderr.fileno(), 65536):
            self.output += chunk

    def stop(self):
        self.process.kill()
        self.process.wait()


class Screens:
    def __init__(self, arguments):
        self.arguments = arguments
        self.failures = []
        self.passed = 0
        self.written = []
        self.directory = tempfile.mkdtemp(prefix="screens-test-")
        os.makedirs(arguments.artifacts, exist_ok=True)
        self.processes = []
        self.listd = DemoListd(os.path.join(arguments.bin, "listd"), self.directory)
        self.processes.append(self.listd)
        self.owner = HomeOwner(os.path.join(arguments.bin, "home-owner"), self.listd)
        self.processes.append(self.owner)
        self.styled_file, self.styled_source, commands = styled_screen()
        self.build_styled_screen(commands)
        # listweb keeps its token in $STATE_DIRECTORY (else under the home directory): in the test's own.
        os.environ["STATE_DIRECTORY"] = os.path.join(self.directory, "listweb-state")
        self.listweb = Listweb(os.path.join(arguments.bin, "listweb"), self.listd, "--allow-actions")
        self.processes.append(self.listweb)
        self.data_sources = {"home": "home", "emoji": "emoji", "outline": "outline", "styled": self.styled_source}
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--force-color-profile=srgb"])
        self.blank = self.browser.new_page()

    def build_styled_screen(self, commands):
        environment = {key: value for key, value in os.environ.items() if key != "NOTIFY_SOCKET"}
        environment["LISTD_SOCKET"] = self.listd.socket_path
        environment["PATH"] = os.path.abspath(self.arguments.bin) + os.pathsep + environment.get("PATH", "/usr/bin:/bin")
        for command in commands:
            result = subprocess.run(["/bin/sh", "-c", command], env=environment, capture_output=True, text=True, timeout=60)
            if result.returncode != 0:
                raise AssertionError(f"the styled screen's command failed ({self.styled_file}): $ {command}\n{result.stdout}{result.stderr}")

    def close(self):
        try:
            self.browser.close()
            self.playwright.stop()
        finally:
            for process in reversed(self.processes):
                process.stop()
            shutil.rmtree(self.directory, ignore_errors=True)

    # MARK: Settling

    def owner_waiting(self, page):
        """What the home-owner may still append, or None: it appends while a view shows the row's last
        company, on screen or near it (up to its limit)."""
        companies = [items for section, items in self.listd.sections("home") if section == "company"][0]
        version = self.listd.request("numberOfSections", dataSource="home")["version"]
        state = page.evaluate("() => ({version: window.listweb.version, near: [...(window.listweb.near || [])], visible: [...(window.listweb.visible || [])]})")
        if state["version"] != version:
            return f"version {version} (the page has {state['version']})"
        if len(companies) < HomeOwner.LIMIT and (companies[-1] in state["near"] or companies[-1] in state["visible"]):
            return f"the home-owner to append after {companies[-1]}"
        return None

    def settle(self, page, screen):
        data_source = self.data_sources[screen]
        last = {"signature": None, "waiting": None}

        def settled():
            version = self.listd.request("numberOfSections", dataSource=data_source)["version"]
            state = page.evaluate(SETTLED)
            waiting = state.get("waiting")
            if not waiting and state["version"] != version:
                waiting = f"version {version} (the page has {state['version']})"
            if not waiting and screen == "home":
                waiting = self.owner_waiting(page)
            last["waiting"] = waiting
            if waiting:
                last["signature"] = None
                return False
            same = state["signature"] == last["signature"]
            last["signature"] = state["signature"]
            return same

        try:
            wait_until(settled, f"{screen} settled", timeout=60)
        except AssertionError:
            raise AssertionError(f"{screen} did not settle: still waiting for {last['waiting'] or 'the layout to stay the same'}") from None

    # MARK: Screens

    def screenshot(self, screen, size):
        width, height = SIZES[size]
        context = self.browser.new_context(
            viewport={"width": width, "height": height}, device_scale_factor=1, reduced_motion="reduce", color_scheme="light",
            locale="en-US", timezone_id="UTC", bypass_csp=True)
        try:
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{self.listweb.base}/sources/{urllib.parse.quote(self.data_sources[screen], safe='')}#token={self.listweb.token}")
            page.wait_for_function("window.listweb && window.listweb.ready", timeout=30000)
            if self.arguments.extra_style:
                page.add_style_tag(content=self.arguments.extra_style)
            # Before settling: the stable text may take another height (the bar's), and what that brings on
            # screen must be drawn too.
            page.evaluate(STABILIZE, VOLATILE)
            self.settle(page, screen)
            assert not errors, errors
            return page.screenshot(animations="disabled", caret="hide")
        finally:
            context.close()

    def compare(self, actual, expected):
        """{differing, pixels[, diff (data: URL)]} or {size: [actual width, height, expected width, height]}."""
        as_url = lambda png: "data:image/png;base64," + base64.b64encode(png).decode()  # noqa: E731
        return self.blank.evaluate(COMPARE, [as_url(actual), as_url(expected), CHANNEL_THRESHOLD])

    def check(self, screen, size):
        name = f"{screen}-{size}"
        reference = os.path.join(self.arguments.references, f"{name}.png")
        actual = self.screenshot(screen, size)
        for suffix in ("actual", "expected", "diff"):
            stale = os.path.join(self.arguments.artifacts, f"{name}.{suffix}.png")
            if os.path.exists(stale):
                os.remove(stale)
        if not os.path.exists(reference):
            if self.arguments.update:
                return self.write(reference, actual, "new")
            self.save(f"{name}.actual.png", actual)
            raise AssertionError(f"no reference {reference}: make it with scripts/screenshots")
        with open(reference, "rb") as file:
            expected = file.read()
        result = self.compare(actual, expected)
        if "size" in result:
            problem = "is {0}×{1}, the reference {2}×{3}".format(*result["size"])
        else:
            share = result["differing"] / result["pixels"]
            summary = f"{result['differing']} of {result['pixels']} pixels differ ({share:.4%}; at most {MAX_DIFFERING_SHARE:.2%} may)"
            if share <= MAX_DIFFERING_SHARE:
                return summary
            problem = summary
        if self.arguments.update:
            return self.write(reference, actual, problem)
        self.save(f"{name}.actual.png", actual)
        self.save(f"{name}.expected.png", expected)
        if result.get("diff"):
            self.save(f"{name}.diff.png", base64.b64decode(result["diff"].split(",", 1)[1]))
        saved = "actual, expected and diff" if result.get("diff") else "actual and expected"
        raise AssertionError(f"{name} {problem}; {saved} in {self.arguments.artifacts}{self.other_drawing()}")

    def other_drawing(self):
        """A note when this machine's browser or fonts are not the ones that drew the references."""
        try:
            with open(os.path.join(self.arguments.references, DRAWN_BY)) as file:
                recorded = file.read()
        except OSError:
            return ""
        here = drawing_packages()
        if recorded == here:
            return ""
        changed = sorted(set(here.splitlines()) - set(recorded.splitlines()))
        return (f". This machine draws with {', '.join(changed)}, not what drew the references ({DRAWN_BY}): if the page did"
                " not change, look at the diff and make the references again with scripts/screenshots")

    def write(self, reference, png, why):
        os.makedirs(os.path.dirname(reference), exist_ok=True)
        with open(reference, "wb") as file:
            file.write(png)
        with open(os.path.join(os.path.dirname(reference), DRAWN_BY), "w") as file:
            file.write(drawing_packages())
        self.written.append(reference)
        shown = os.path.relpath(reference, REPOSITORY) if reference.startswith(REPOSITORY + os.sep) else reference
        return f"wrote {shown} ({why})"

    def save(self, name, png):
        with open(os.path.join(self.arguments.artifacts, name), "wb") as file:
            file.write(png)

    def run(self, screen, size):
        started = time.monotonic()
        try:
            summary = self.check(screen, size)
            self.passed += 1
            print(f"ok   {screen}-{size}: {summary} ({time.monotonic() - started:.1f} s)", flush=True)
        except Exception:  # noqa: BLE001 - every failure is reported, the others still run
            self.failures.append(f"{screen}-{size}")
            print(f"FAIL {screen}-{size}\n{traceback.format_exc()}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bin", required=True, help="where listd, listweb, listctl, the plugins and home-owner are")
    parser.add_argument("--artifacts", required=True, help="where a failure's actual, expected and diff images go")
    parser.add_argument("--references", default=REFERENCES, help="the reference screenshots (default: docs/screens)")
    parser.add_argument("--update", action="store_true", help="rewrite the references that are missing or differ")
    parser.add_argument("--only", default="", help="comma-separated screens or screen-size names (default: all)")
    parser.add_argument("--extra-style", default="", metavar="CSS",
                        help="CSS added to every page, to see what a change to the page would do to the comparison")
    arguments = parser.parse_args()
    arguments.references = os.path.abspath(arguments.references)
    wanted = [name for name in arguments.only.split(",") if name]
    pairs = [(screen, size) for screen in SCREENS for size in SIZES
             if not wanted or screen in wanted or f"{screen}-{size}" in wanted]
    if not pairs:
        parser.error(f"--only names none of {', '.join(SCREENS)} (with -{' or -'.join(SIZES)})")
    started = time.monotonic()
    screens = Screens(arguments)
    try:
        for screen, size in pairs:
            screens.run(screen, size)
    finally:
        screens.close()
    print(f"{screens.passed} passed, {len(screens.failures)} failed" + (f": {', '.join(screens.failures)}" if screens.failures else "")
          + f" ({time.monotonic() - started:.1f} s)")
    sys.exit(1 if screens.failures else 0)


if __name__ == "__main__":
    main()
