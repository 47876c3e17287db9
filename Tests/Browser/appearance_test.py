#!/usr/bin/env python3
"""listweb's pages in UIKit's system look, and usable without a mouse (issue 49 items 1 and 2), in Chromium:

- the look: plain, grouped, insetGrouped and sidebar lists side by side, each with UIKit's row background,
  inset, radii and separators from the text's leading edge; an inset grouped page all in systemGroupedBackground, its sections' first and last rows rounded
  (10) and inset by the layout margins (16 at 390 points, 20 wider), rows at least 44 tall; grouped headers
  in footnote (13), secondaryLabel, upper-cased; the styled screen's cards drawn as cards with a badge "12"
  on one line; the emoji plugin's largeTitle at 34 px; the dark palette with prefers-color-scheme: dark;
- the page's parts: the index at 390 points shows every column (reflowed), the bar keeps to one line;
- for assistive technology and the keyboard: lists and trees with their levels, open states and
  selection, one tab stop, arrows, Enter, Right and Left in an outline, a whole row that opens on a click,
  a visible focus ring; no animation with prefers-reduced-motion; the outage banner while listd is down.

    appearance_test.py --bin .build/debug --artifacts .build/artifacts/listweb

Uses listweb_test.py's listd, listweb and browser helpers. Exit status 0 when every check passes; screenshots
appearance-*.png go to the artifacts directory.
"""

import json
import os
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listweb_test import Checks, run_checks, wait_until  # noqa: E402  (after the path it is found on)

# UIKit's colours as the browser reports them (docs/listweb-appearance-values.md).
GROUPED_BACKGROUND = {"light": "rgb(242, 242, 247)", "dark": "rgb(0, 0, 0)"}
CELL_BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(28, 28, 30)"}
LABEL = {"light": "rgb(0, 0, 0)", "dark": "rgb(255, 255, 255)"}
SECONDARY_LABEL = {"light": "rgba(60, 60, 67, 0.6)", "dark": "rgba(235, 235, 245, 0.6)"}
SYSTEM_BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(0, 0, 0)"}

# One section per list appearance, three rows each.
APPEARANCES = ["plain", "grouped", "insetGrouped", "sidebar"]
LOOKS = {
    "snapshot": {"sections": [{"id": name, "items": [{"id": f"{name}-{n}", "data": {"title": f"{name} {n}"}} for n in range(3)]}
                              for name in APPEARANCES]},
    "layout": {"default": {"list": {"appearance": "plain"}}, "sections": {name: {"list": {"appearance": name}} for name in APPEARANCES}},
}

# Per row of a section: where its text starts, and whether its separator is drawn.
SEPARATORS = """(section) => [...document.querySelectorAll(`section[data-section="${section}"] > .items > .cell`)].map(cell => {
  const texts = cell.querySelector('.texts'); const text = cell.querySelector('.text');
  return {row: cell.getBoundingClientRect().left, text: text.getBoundingClientRect().left,
          separator: getComputedStyle(texts, '::after').display !== 'none',
          separatorStart: texts.getBoundingClientRect().left};
})"""

# The README's first styled screen ("Your first styled screen"), with a two-digit badge.
SHOP = {
    "snapshot": {"sections": [
        {"id": "new", "data": {"title": "New in"}, "items": [
            {"id": "lamp", "data": {"title": "Lamp", "price": "12 EUR"}}, {"id": "mug", "data": {"title": "Mug", "price": "6 EUR"}}]},
        {"id": "cards", "data": {"title": "Collections"}, "items": [
            {"id": "kitchen", "data": {"title": "Kitchen", "count": "24 items", "new": 12}},
            {"id": "garden", "data": {"title": "Garden", "count": "12 items"}},
            {"id": "desk", "data": {"title": "Desk", "count": "9 items", "new": 1}}]},
        {"id": "help", "data": {"title": "Help"}, "items": [{"id": "faq", "data": {"title": "Questions and answers"}}]}]},
    "layout": {"default": {"list": {"appearance": "insetGrouped", "headerMode": "supplementary"}}, "sections": {"cards": {
        "item": {"width": {"fractionalWidth": 1}, "height": {"fractionalHeight": 1}, "supplementaryItems": [
            {"elementKind": "badge", "width": {"absolute": 3}, "height": {"absolute": 1},
             "containerAnchor": {"edges": ["top", "trailing"], "absoluteOffset": {"x": -1}}}]},
        "group": {"axis": "horizontal", "width": {"fractionalWidth": 0.45}, "height": {"absolute": 4}},
        "interGroupSpacing": 1, "orthogonalScrollingBehavior": "continuous", "header": {},
        "contentInsets": {"leading": 2, "trailing": 2, "bottom": 1}}}},
}

# Per row of a section: its box, corner radii, background and the page's background.
ROWS = """(section) => [...document.querySelectorAll(`section[data-section="${section}"] > .items > .cell`)].map(cell => {
  const box = cell.getBoundingClientRect(); const style = getComputedStyle(cell);
  return {item: cell.dataset.item, left: box.left, right: box.right, height: box.height,
          topLeft: style.borderTopLeftRadius, topRight: style.borderTopRightRadius,
          bottomLeft: style.borderBottomLeftRadius, bottomRight: style.borderBottomRightRadius,
          background: style.backgroundColor, color: style.color};
})"""


def emoji_plugin_stand_in(socket_path, stop):
    """What plugins/emoji/main.swift answers (its text in largeTitle, centred), for a --bin without it."""
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(socket_path)
    stream = connection.makefile("rwb")

    def send(value):
        stream.write(json.dumps(value).encode() + b"\n")
        stream.flush()

    send({"cmd": "hello", "role": "plugin", "name": "emoji", "provides": ["emoji"], "protocol": 1})
    for line in stream:
        if stop.is_set():
            break
        message = json.loads(line)
        if message.get("event") != "configure":
            continue
        send({"cmd": "configured", "request": message["request"], "cells": [
            {"cell": cell["cell"], "content": {"text": (cell.get("data") or {}).get("text", cell["item"]), "font": "largeTitle",
                                               "alignment": "center", "selected": (cell.get("state") or {}).get("selected", False)}}
            for cell in message["cells"]]})
    connection.close()


class AppearanceChecks(Checks):
    def __init__(self, arguments):
        super().__init__(arguments)
        listd = self.listd
        listd.request("apply", dataSource="shop", snapshot=SHOP["snapshot"])
        listd.request("register", registration="shopHeader", replace=True, kind="supplementary", elementKind="header",
                      contentConfiguration={"type": "groupedHeader", "text": "{{title}}"})
        listd.request("register", registration="shopBadge", replace=True, kind="supplementary", elementKind="badge",
                      contentConfiguration={"type": "cell", "text": "{{new}}"})
        listd.request("register", registration="shopRow", replace=True, contentConfiguration={
            "type": "valueCell", "text": "{{title}}", "secondaryText": "{{price}}", "secondaryTextProperties": {"color": "systemGreen"}})
        listd.request("register", registration="shopCard", replace=True, contentConfiguration={
            "type": "subtitleCell", "text": "{{title}}", "secondaryText": "{{count}}", "textProperties": {"font": "headline"}})
        listd.request("setCellProvider", dataSource="shop", rules=[{"section": "cards", "registration": "shopCard"}], default="shopRow")
        listd.request("setSupplementaryProvider", dataSource="shop", elementKind="header", rules=[], default="shopHeader")
        listd.request("setSupplementaryProvider", dataSource="shop", elementKind="badge", rules=[], default="shopBadge")
        listd.request("setLayout", dataSource="shop", layout=SHOP["layout"])
        listd.request("apply", dataSource="looks", snapshot=LOOKS["snapshot"])
        listd.request("register", registration="lookRow", replace=True, contentConfiguration={"type": "cell", "text": "{{title}}"})
        listd.request("setCellProvider", dataSource="looks", rules=[], default="lookRow")
        listd.request("setLayout", dataSource="looks", layout=LOOKS["layout"])

    def shot(self, page, name):
        page.screenshot(path=os.path.join(self.arguments.artifacts, f"appearance-{name}.png"))

    def drawn(self, page, count=3):
        page.wait_for_function(f"document.querySelectorAll('.cell:not(.placeholder)').length >= {count}", timeout=20000)

    # MARK: The look

    def inset_grouped_pages_are_grouped_throughout(self):
        for width, margin in [(390, 16), (1280, 20)]:
            for scheme in ["light", "dark"]:
                page = self.page(self.reader, "/sources/outline", width=width, height=844)
                page.emulate_media(color_scheme=scheme)
                self.drawn(page)
                page.wait_for_function("document.querySelector('section[data-section=\"recents\"] > .items > .cell:last-child:not(.placeholder)')",
                                       timeout=20000)
                colours = page.evaluate("""(() => { const root = getComputedStyle(document.documentElement);
                    return {page: getComputedStyle(document.body).backgroundColor, html: getComputedStyle(document.documentElement).backgroundColor,
                            property: root.getPropertyValue('--systemGroupedBackground').trim(),
                            section: getComputedStyle(document.querySelector('section')).backgroundColor,
                            collection: getComputedStyle(document.getElementById('collection')).backgroundColor}; })()""")
                assert colours["page"] == GROUPED_BACKGROUND[scheme] and colours["html"] == GROUPED_BACKGROUND[scheme], (scheme, colours)
                # Nothing between or under the sections paints another colour.
                assert colours["section"] == "rgba(0, 0, 0, 0)" and colours["collection"] == "rgba(0, 0, 0, 0)", colours
                # The page under the last section is the grouped background too (what the screenshot shows there).
                below = page.evaluate("""(() => { const last = [...document.querySelectorAll('section')].pop();
                    scrollTo(0, document.body.scrollHeight); const y = Math.min(innerHeight - 2, last.getBoundingClientRect().bottom + 10);
                    const under = document.elementFromPoint(4, y); return under ? getComputedStyle(under).backgroundColor : null; })()""")
                assert below in (GROUPED_BACKGROUND[scheme], "rgba(0, 0, 0, 0)"), below
                page.evaluate("scrollTo(0, 0)")
                rows = page.evaluate(ROWS, "recents")
                collection = page.evaluate("document.getElementById('collection').getBoundingClientRect().left")
                first, middle, last = rows[0], rows[1], rows[-1]
                assert first["topLeft"] == first["topRight"] == "10px" and first["bottomLeft"] == "0px", first
                assert middle["topLeft"] == middle["bottomRight"] == "0px", middle
                assert last["bottomLeft"] == last["bottomRight"] == "10px" and last["topLeft"] == "0px", last
                for row in rows:
                    assert abs(row["left"] - collection - margin) <= 0.5, (width, margin, row)
                    assert row["height"] >= 44, row
                    assert row["background"] == CELL_BACKGROUND[scheme] and row["color"] == LABEL[scheme], (scheme, row)
                # The value cell's category (valueCell: body in secondaryLabel); the emoji's category text is its secondary text.
                secondary = page.evaluate("getComputedStyle(document.querySelector('.cell .secondary')).color")
                assert secondary == SECONDARY_LABEL[scheme], secondary
                self.shot(page, f"outline-{width}-{scheme}")
                page.context.close()

    def every_list_appearance(self):
        """plain, grouped, insetGrouped and sidebar side by side on a plain page, light and dark: each with
        UIKit's row background, inset, corner radii and separators (from the text's leading edge)."""
        for scheme in ["light", "dark"]:
            page = self.page(self.reader, "/sources/looks", width=390, height=1200)
            page.emulate_media(color_scheme=scheme)
            page.wait_for_function("document.querySelectorAll('section > .items > .cell:not(.placeholder)').length >= 12", timeout=20000)
            collection = page.evaluate("(() => { const box = document.getElementById('collection').getBoundingClientRect(); return {left: box.left, right: box.right}; })()")
            assert page.evaluate("getComputedStyle(document.body).backgroundColor") == SYSTEM_BACKGROUND[scheme], scheme
            rows = {name: page.evaluate(ROWS, name) for name in APPEARANCES}
            lines = {name: page.evaluate(SEPARATORS, name) for name in APPEARANCES}
            for name in APPEARANCES:
                assert len(rows[name]) == 3 and all(row["height"] >= 44 for row in rows[name]), (name, rows[name])
                assert all(row["color"] == LABEL[scheme] for row in rows[name]), (name, rows[name])
            # plain: rows as wide as the collection on systemBackground, square, a separator under every row
            # that starts where the text does.
            for row, line in zip(rows["plain"], lines["plain"]):
                assert row["left"] == collection["left"] and row["right"] == collection["right"], row
                assert row["background"] == SYSTEM_BACKGROUND[scheme] and row["topLeft"] == row["bottomLeft"] == "0px", row
                assert line["separator"] and line["separatorStart"] == line["text"] > line["row"], line
            # grouped: as wide, on secondarySystemGroupedBackground, square; no separator under the last row.
            for row in rows["grouped"]:
                assert row["left"] == collection["left"] and row["right"] == collection["right"], row
                assert row["background"] == CELL_BACKGROUND[scheme] and row["topLeft"] == row["bottomRight"] == "0px", row
            assert [line["separator"] for line in lines["grouped"]] == [True, True, False], lines["grouped"]
            assert all(line["separatorStart"] == line["text"] > line["row"] for line in lines["grouped"]), lines["grouped"]
            # insetGrouped: inset by the layout margin, the first and last rows rounded.
            inset = rows["insetGrouped"]
            assert all(abs(row["left"] - collection["left"] - 16) <= 0.5 and abs(collection["right"] - row["right"] - 16) <= 0.5 for row in inset), inset
            assert inset[0]["topLeft"] == "10px" and inset[0]["bottomLeft"] == "0px" and inset[2]["bottomRight"] == "10px" and inset[1]["topRight"] == "0px", inset
            assert [line["separator"] for line in lines["insetGrouped"]] == [True, True, False], lines["insetGrouped"]
            # sidebar: rows inset by 10, each rounded, on the page's own background, no separators.
            for row, line in zip(rows["sidebar"], lines["sidebar"]):
                assert abs(row["left"] - collection["left"] - 10) <= 0.5 and row["topLeft"] == row["bottomRight"] == "10px", row
                assert row["background"] == "rgba(0, 0, 0, 0)" and not line["separator"], (row, line)
            self.shot(page, f"lists-{scheme}")
            page.context.close()

    def cards_badges_and_headers(self):
        for width in [390, 1280]:
            page = self.page(self.reader, "/sources/shop", width=width, height=844)
            badge = '.cell[data-item="kitchen"] .badge'
            page.wait_for_function(f"(() => {{ const b = document.querySelector('{badge}'); return b && !b.hidden && b.textContent === '12'; }})()",
                                   timeout=20000)
            page.wait_for_function("document.querySelector('section[data-section=\"cards\"] > .supplementary.header').textContent === 'Collections'",
                                   timeout=20000)
            facts = page.evaluate(f"""(() => {{
                const badge = document.querySelector('{badge}'); const text = badge.querySelector('.text');
                const card = document.querySelector('.cell[data-item="kitchen"]'); const style = getComputedStyle(card);
                const header = document.querySelector('section[data-section="new"] > .supplementary.header');
                const headerText = header.querySelector('.text') || header;
                const hs = getComputedStyle(headerText);
                return {{badgeHeight: badge.getBoundingClientRect().height, badgeWidth: badge.getBoundingClientRect().width,
                         textWidth: text.getBoundingClientRect().width, lines: text.getClientRects().length,
                         whiteSpace: getComputedStyle(badge).whiteSpace,
                         cardBackground: style.backgroundColor, cardRadius: style.borderTopLeftRadius,
                         page: getComputedStyle(document.body).backgroundColor,
                         headerSize: hs.fontSize, headerTransform: getComputedStyle(header).textTransform, headerColor: hs.color,
                         headerShown: getComputedStyle(header).textTransform === 'uppercase' ? header.textContent : null,
                         title: getComputedStyle(card.querySelector('.text')).fontWeight}};
            }})()""")
            # The badge holds "12" on one line, as wide as its text and its padding.
            assert facts["lines"] == 1 and facts["badgeHeight"] <= 22, facts
            assert facts["badgeWidth"] >= facts["textWidth"] + 8 and facts["whiteSpace"] == "nowrap", facts
            # The cards are cards: their own background on the grouped page, rounded.
            assert facts["cardBackground"] == CELL_BACKGROUND["light"] and facts["page"] == GROUPED_BACKGROUND["light"], facts
            assert facts["cardRadius"] == "10px", facts
            # Grouped headers: footnote (13) in secondaryLabel, upper-cased; the card's title in headline (semibold).
            assert facts["headerSize"] == "13px" and facts["headerTransform"] == "uppercase", facts
            assert facts["headerColor"] == SECONDARY_LABEL["light"], facts
            assert facts["title"] == "600", facts
            self.shot(page, f"shop-{width}")
            page.context.close()

    def the_emoji_plugins_large_title_is_34_points(self):
        plugin = os.path.join(self.arguments.bin, "emoji-plugin")
        stop = threading.Event()
        if os.path.exists(plugin):
            process = subprocess.Popen([plugin, "--socket", self.listd.socket_path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        else:
            process = None
            threading.Thread(target=emoji_plugin_stand_in, args=(self.listd.socket_path, stop), daemon=True).start()
        try:
            wait_until(lambda: any("emoji" in plugin.get("provides", []) for plugin in self.listd.request("stats").get("plugins", [])),
                       "the emoji plugin")
            self.listd.request("register", registration="bigEmoji", replace=True, contentConfiguration={"type": "plugin:emoji"})
            self.listd.request("apply", dataSource="big-emoji", snapshot={"sections": [{"id": "s", "items": [
                {"id": "grin", "data": {"text": "😀"}}, {"id": "dog", "data": {"text": "🐶"}}]}]})
            self.listd.request("setCellProvider", dataSource="big-emoji", rules=[], default="bigEmoji")
            self.listd.request("setLayout", dataSource="big-emoji", layout={"default": {
                "item": {"width": {"fractionalWidth": 1}, "height": {"fractionalHeight": 1}},
                "group": {"axis": "horizontal", "width": {"absolute": 16}, "height": {"absolute": 3}, "count": 1},
                "orthogonalScrollingBehavior": "continuousGroupLeadingBoundary"}})
            page = self.page(self.reader, "/sources/big-emoji", width=390, height=844)
            page.wait_for_function("(document.querySelector('.cell[data-item=\"grin\"] .text') || {}).textContent === '😀'", timeout=20000)
            facts = page.evaluate("""(() => { const cell = document.querySelector('.cell[data-item="grin"]'); const text = cell.querySelector('.text');
                const c = cell.getBoundingClientRect(), t = text.getBoundingClientRect();
                return {size: getComputedStyle(text).fontSize, centreX: (t.left + t.right) / 2 - (c.left + c.right) / 2,
                        centreY: (t.top + t.bottom) / 2 - (c.top + c.bottom) / 2}; })()""")
            assert facts["size"] == "34px", facts
            assert abs(facts["centreX"]) <= 2 and abs(facts["centreY"]) <= 2, f"the emoji is centred (the plugin says center): {facts}"
            self.shot(page, "large-emoji")
            page.context.close()
        finally:
            stop.set()
            if process:
                process.kill()
                process.wait()

    def home_cards_start_at_the_top(self):
        page = self.page(self.reader, "/sources/home", width=390, height=844)
        self.drawn(page, 4)
        facts = page.evaluate("""(() => { const cell = document.querySelector('.cell[data-item="consult-1"]');
            const c = cell.getBoundingClientRect(), t = cell.querySelector('.texts').getBoundingClientRect();
            return {gap: t.top - c.top, height: c.height}; })()""")
        assert facts["height"] >= 199 and facts["gap"] <= 16, f"the card's lines at its top, not centred in it: {facts}"
        self.shot(page, "home-390")
        page.context.close()

    def the_index_and_the_bar_at_phone_width(self):
        page = self.page(self.reader, "/sources/home", width=390, height=844)
        bar = page.evaluate("""(() => { const bar = document.querySelector('.bar'); const status = document.getElementById('status');
            return {height: bar.getBoundingClientRect().height, lines: status.getClientRects().length, statusHeight: status.getBoundingClientRect().height,
                    text: status.textContent, wraps: getComputedStyle(status).whiteSpace, right: status.getBoundingClientRect().right}; })()""")
        assert "view web-" in bar["text"], bar
        assert bar["height"] <= 45 and bar["statusHeight"] <= 20 and bar["wraps"] == "nowrap" and bar["right"] <= 390, bar
        page.goto(self.reader.base + "/")
        page.wait_for_function("document.querySelectorAll('#sources tbody tr').length >= 3", timeout=20000)
        facts = page.evaluate("""(() => ({width: innerWidth, scroll: document.documentElement.scrollWidth,
            labels: [...document.querySelectorAll('#sources tbody tr:first-child td')].map(td => td.dataset.label),
            cells: [...document.querySelectorAll('#sources tbody td')].map(td => { const r = td.getBoundingClientRect();
                return {left: r.left, right: r.right, width: r.width, text: td.textContent}; })}))()""")
        assert facts["scroll"] <= facts["width"], facts["scroll"]
        assert facts["labels"] == ["Data source", "Version", "Sections", "Items", "Views", "Owner", "Access"], facts["labels"]
        cut = [cell for cell in facts["cells"] if cell["left"] < 0 or cell["right"] > facts["width"] or cell["width"] <= 0]
        assert not cut, f"cut: {cut[:3]}"
        self.shot(page, "index-390")
        page.context.close()

    # MARK: Assistive technology and the keyboard

    def the_outline_is_a_tree_for_the_keyboard(self):
        page = self.page(self.actor, "/sources/emoji", width=390, height=844)
        smileys = '.cell[data-item="smileys"]'
        page.wait_for_function(f"document.querySelector('{smileys}[aria-expanded]')", timeout=20000)
        roles = page.evaluate("""(() => ({outline: document.querySelector('section[data-section="outline"] > .items').getAttribute('role'),
            numbers: document.querySelector('section[data-section="numbers"] > .items').getAttribute('role'),
            number: document.querySelector('.cell[data-item="n0"]').getAttribute('role'),
            smileys: [document.querySelector('.cell[data-item="smileys"]').getAttribute('role'),
                      document.querySelector('.cell[data-item="smileys"]').getAttribute('aria-level'),
                      document.querySelector('.cell[data-item="smileys"]').getAttribute('aria-expanded')],
            stops: document.querySelectorAll('#collection [tabindex="0"]').length}))()""")
        assert roles == {"outline": "tree", "numbers": "list", "number": "listitem", "smileys": ["treeitem", "1", "false"], "stops": 1}, roles
        # Tab reaches the view's one tab stop, the first row (after the bar's link home).
        for _ in range(2):
            page.keyboard.press("Tab")
        page.wait_for_function(f"document.activeElement === document.querySelector('{smileys}')", timeout=20000)
        assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid", "the focus is visible"
        # Right opens the row; Right again goes to its first child; Left goes back to the parent; Left closes it.
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.querySelector('{smileys}').getAttribute('aria-expanded') === 'true'", timeout=20000)
        child = '.cell[data-item="smileys/😀"]'
        page.wait_for_function(f"(document.querySelector('{child}') || {{}}).getAttribute?.('aria-level') === '2'", timeout=20000)
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.activeElement === document.querySelector('{child}')", timeout=20000)
        self.shot(page, "outline-keyboard")
        page.keyboard.press("ArrowDown")
        page.wait_for_function("document.activeElement.dataset.item === 'smileys/😂'", timeout=20000)
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(f"document.activeElement === document.querySelector('{smileys}')", timeout=20000)
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(f"document.querySelector('{smileys}').getAttribute('aria-expanded') === 'false'", timeout=20000)
        page.wait_for_function(f"document.querySelector('{child}') === null", timeout=20000)
        # Down to the next row; Enter selects it, Space deselects it.
        page.keyboard.press("ArrowDown")
        page.wait_for_function("document.activeElement.dataset.item === 'nature'", timeout=20000)
        page.keyboard.press("Enter")
        page.wait_for_function("document.querySelector('.cell[data-item=\"nature\"]').getAttribute('aria-selected') === 'true'", timeout=20000)
        page.keyboard.press(" ")
        page.wait_for_function("document.querySelector('.cell[data-item=\"nature\"]').getAttribute('aria-selected') === 'false'", timeout=20000)
        assert page.evaluate("document.querySelectorAll('#collection [tabindex=\"0\"]').length") == 1, "one tab stop"
        # A click anywhere on a parent row opens it (not only its chevron).
        page.click('.cell[data-item="food"] .text')
        page.wait_for_function("document.querySelector('.cell[data-item=\"food\"]').getAttribute('aria-expanded') === 'true'", timeout=20000)
        page.wait_for_function("window.listweb.domOrder()[0][1].includes('food/🍎')", timeout=20000)
        # In a list, arrows move between rows too.
        page.focus('.cell[data-item="n0"]')
        page.keyboard.press("ArrowDown")
        page.wait_for_function("document.activeElement.dataset.item === 'n1'", timeout=20000)
        page.keyboard.press("Enter")
        page.wait_for_function("document.querySelector('.cell[data-item=\"n1\"]').getAttribute('aria-selected') === 'true'", timeout=20000)
        assert not page.errors, page.errors
        page.context.close()

    def reduced_motion_turns_animation_off(self):
        self.listd.request("apply", dataSource="still", snapshot={"sections": [{"id": "s", "items": ["a", "b", "c"]}]})
        context = self.browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True, reduced_motion="reduce")
        page = context.new_page()
        page.goto(f"{self.reader.base}/sources/still#token={self.reader.token}")
        page.wait_for_function("window.listweb && window.listweb.ready", timeout=20000)
        self.drawn(page)
        before = page.evaluate("window.listweb.animationsStarted")
        self.listd.request("moveItem", dataSource="still", item="a", afterItem="c")
        self.wait_for_version(page, "still")
        assert page.evaluate("window.listweb.lastChangeAnimated") is True, "an animated change"
        assert page.evaluate("window.listweb.animationsStarted") == before, "nothing animates with reduced motion"
        running = page.evaluate("document.getAnimations().length")
        durations = page.evaluate("""[...document.querySelectorAll('.cell, .accessory')].map(node => getComputedStyle(node).transitionDuration)
            .filter(duration => duration !== '0s')""")
        assert running == 0 and durations == [], (running, durations)
        assert page.evaluate("window.listweb.domOrder()") == [["s", ["b", "c", "a"]]]
        context.close()

    def an_outage_is_shown_until_listd_is_back(self):
        page = self.page(self.reader, "/sources/home", width=390, height=844)
        self.drawn(page, 2)
        banner = "document.querySelector('.outage')"
        assert page.evaluate(f"{banner}.hidden"), "no banner while listd answers"
        self.listd.stop()
        self.listd.connection.close()
        try:
            page.wait_for_function(f"!{banner}.hidden && {banner}.textContent.includes('not answering')", timeout=20000)
            facts = page.evaluate(f"""(() => ({{role: {banner}.getAttribute('role'), filter: getComputedStyle(document.getElementById('collection')).filter,
                opacity: getComputedStyle(document.getElementById('collection')).opacity, visible: {banner}.getBoundingClientRect().height > 0}}))()""")
            assert facts["role"] in ("alert", "status") and facts["visible"], facts
            assert "grayscale" in facts["filter"] and float(facts["opacity"]) < 1, facts
            self.shot(page, "outage")
        finally:
            self.listd.start()
        page.wait_for_function(f"{banner}.hidden && !document.getElementById('collection').classList.contains('offline') && window.listweb.ready",
                               timeout=30000)
        assert page.evaluate("getComputedStyle(document.getElementById('collection')).filter") == "none"
        page.context.close()


def main():
    run_checks(AppearanceChecks, lambda checks: [
        checks.inset_grouped_pages_are_grouped_throughout, checks.every_list_appearance, checks.cards_badges_and_headers,
        checks.the_emoji_plugins_large_title_is_34_points, checks.home_cards_start_at_the_top,
        checks.the_index_and_the_bar_at_phone_width, checks.the_outline_is_a_tree_for_the_keyboard,
        checks.reduced_motion_turns_animation_off, checks.an_outage_is_shown_until_listd_is_back])


if __name__ == "__main__":
    main()
