#!/usr/bin/env python3
"""listweb in Chromium draws every accessory kind as UIKit has it (issue 45 point 3): a cell whose
registration lists all eleven kinds, a checkmark that shows in an unselected cell while a `hidden` one keeps
its place blank, the editing controls only once the cell's state is `editing`, a label's text, a tint colour,
a reserved width, a pop-up menu's choice and a custom view's text, each at UIKit's edge.

    accessories_test.py --bin .build/debug --artifacts .build/artifacts/listweb

Uses listweb_test.py's listd, listweb and browser helpers. Exit status 0 when every check passes; the
screenshots accessories.png (not editing) and accessories-editing.png go to the artifacts directory.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listweb_test import Checks, run_checks  # noqa: E402  (after the path it is found on)

DATA_SOURCE = "accessories"
TINT = "#ff9500"  # on the disclosure indicator
TINT_RGB = "rgb(255, 149, 0)"
RESERVED_WIDTH = 44  # points, on the detail accessory
ACCESSORIES = [
    {"type": "delete"},
    {"type": "insert"},
    {"type": "multiselect"},
    {"type": "outlineDisclosure"},
    {"type": "customView", "text": "lead", "placement": "leading"},
    {"type": "label", "text": "{{count}} new"},
    {"type": "checkmark"},
    {"type": "checkmark", "hidden": True},
    {"type": "disclosureIndicator", "tintColor": TINT},
    {"type": "detail", "reservedLayoutWidth": RESERVED_WIDTH},
    {"type": "popUpMenu", "menu": ["Low", "High"], "selectedElement": "High"},
    {"type": "reorder"},
]
EDITING_KINDS = ["delete", "insert", "reorder", "multiselect"]
LEADING_KINDS = {"delete", "insert", "multiselect", "outlineDisclosure"}

# Per accessory element of the first item's cell, in the DOM's order: its kind, classes, text, box (beside the
# content, inside the cell) and computed style.
ACCESSORIES_OF_FIRST_CELL = """() => {
  const cell = document.querySelector('.cell[data-item="first"]');
  const texts = cell.querySelector('.texts').getBoundingClientRect();
  const bounds = cell.getBoundingClientRect();
  return [...cell.querySelectorAll('[data-accessory]')].map(node => {
    const box = node.getBoundingClientRect();
    const style = getComputedStyle(node);
    return {kind: node.dataset.accessory, hidden: node.classList.contains('hidden'), text: node.textContent,
            left: box.left, right: box.right, width: box.width, height: box.height,
            visibility: style.visibility, display: style.display, color: style.color,
            leading: box.right <= texts.left, trailing: box.left >= texts.right,
            inside: box.left >= bounds.left - 0.5 && box.right <= bounds.right + 0.5};
  });
}"""


class AccessoryChecks(Checks):
    def accessory_page(self):
        """The data source (two items) whose cells list every kind, and a page showing its first cell."""
        self.listd.request("register", registration="everyAccessory", replace=True,
                           contentConfiguration={"type": "cell", "text": "{{title}}"}, accessories=ACCESSORIES)
        items = [{"id": "first", "data": {"title": "First", "count": 3}}, {"id": "second", "data": {"title": "Second", "count": 0}}]
        self.listd.request("apply", dataSource=DATA_SOURCE, snapshot={"sections": [{"id": "s", "items": items}]})
        self.listd.request("setCellProvider", dataSource=DATA_SOURCE, default="everyAccessory")
        page = self.page(self.reader, f"/sources/{DATA_SOURCE}", height=400)
        page.wait_for_function("(document.querySelector('.cell[data-item=\"first\"]') || {}).textContent?.includes('First')", timeout=20000)
        return page

    @staticmethod
    def accessories(page, inside=True):
        """The first cell's accessories (ACCESSORIES_OF_FIRST_CELL), each inside the cell unless not
        `inside`, and its title on one line beside them. (All twelve with the editing controls take more
        than a 375-point cell, as they would in UIKit; without them they fit.)"""
        accessories = page.evaluate(ACCESSORIES_OF_FIRST_CELL)
        outside = [accessory for accessory in accessories if not accessory["inside"]]
        assert not inside or not outside, f"drawn outside the cell: {outside}"
        lines = page.evaluate("document.querySelector('.cell[data-item=\"first\"] .text').getClientRects().length")
        height = page.evaluate("document.querySelector('.cell[data-item=\"first\"] .text').getBoundingClientRect().height")
        assert lines == 1 and height < 30, f"the title squeezed by the accessories: {lines} boxes, {height}px high"
        return accessories

    @staticmethod
    def of_kind(accessories, kind):
        return [accessory for accessory in accessories if accessory["kind"] == kind]

    def the_shown_kinds_in_an_unselected_cell(self, accessories):
        kinds = [accessory["kind"] for accessory in accessories]
        expected = [accessory["type"] for accessory in ACCESSORIES if accessory["type"] not in EDITING_KINDS]
        assert sorted(kinds) == sorted(expected), f"drawn {kinds}, expected {expected}"
        shown, blank = self.of_kind(accessories, "checkmark")
        # A checkmark shows whatever the selection (UIKit's .checkmark()); `hidden` keeps its place, blank.
        assert not shown["hidden"] and shown["visibility"] == "visible" and shown["width"] > 0 and shown["text"] == "✓", shown
        assert blank["hidden"] and blank["visibility"] == "hidden", blank
        assert blank["width"] >= shown["width"] - 0.5 and blank["height"] > 0, f"the hidden checkmark keeps its place: {blank}"
        assert blank["left"] >= shown["right"], f"in the registration's order: {shown}, {blank}"
        label = self.of_kind(accessories, "label")[0]
        assert label["text"] == "3 new" and label["visibility"] == "visible", label
        disclosure = self.of_kind(accessories, "disclosureIndicator")[0]
        assert disclosure["text"] == "›" and disclosure["color"] == TINT_RGB, f"tintColor {TINT}: {disclosure}"
        detail = self.of_kind(accessories, "detail")[0]
        assert detail["text"] == "ⓘ" and detail["width"] >= RESERVED_WIDTH - 0.5, f"reservedLayoutWidth {RESERVED_WIDTH}: {detail}"
        menu = self.of_kind(accessories, "popUpMenu")[0]
        assert menu["text"].startswith("High"), menu
        custom = self.of_kind(accessories, "customView")[0]
        assert custom["text"] == "lead", custom
        for accessory in accessories:
            if accessory["kind"] in LEADING_KINDS or accessory["kind"] == "customView":  # placement: leading
                assert accessory["leading"], f"{accessory['kind']} at the leading edge: {accessory}"
            else:
                assert accessory["trailing"], f"{accessory['kind']} at the trailing edge: {accessory}"

    def every_kind_is_drawn_and_editing_controls_wait_for_editing(self):
        page = self.accessory_page()
        accessories = self.accessories(page)
        self.the_shown_kinds_in_an_unselected_cell(accessories)
        assert "selected" not in page.evaluate("document.querySelector('.cell[data-item=\"first\"]').className")
        page.screenshot(path=os.path.join(self.arguments.artifacts, "accessories.png"))

        # The cell's state becomes editing (setState over the socket, on the page's own view): listd
        # configures it again, the page gets cellUpdated and draws the editing controls.
        view = page.evaluate("window.listweb.viewName")
        self.listd.request("setState", view=view, dataSource=DATA_SOURCE, item="first", state={"editing": True})
        page.wait_for_function(
            "document.querySelectorAll('.cell[data-item=\"first\"] [data-accessory=delete]').length > 0", timeout=20000)
        editing = self.accessories(page, inside=False)
        kinds = [accessory["kind"] for accessory in editing]
        assert sorted(kinds) == sorted(accessory["type"] for accessory in ACCESSORIES), f"editing: drawn {kinds}"
        for kind, symbol in [("delete", "⊖"), ("insert", "⊕"), ("reorder", "≡"), ("multiselect", "○")]:
            control = self.of_kind(editing, kind)[0]
            assert control["text"] == symbol and control["visibility"] == "visible" and control["width"] > 0, control
        # The editing controls first at the leading edge, in the registration's order, then the outline disclosure.
        leading = [accessory["kind"] for accessory in sorted(editing, key=lambda accessory: accessory["left"]) if accessory["leading"]]
        assert leading == ["delete", "insert", "multiselect", "outlineDisclosure", "customView"], leading
        assert self.of_kind(editing, "reorder")[0]["trailing"], editing
        # The other cell is not editing: no controls there.
        others = page.evaluate("[...document.querySelectorAll('.cell[data-item=\"second\"] [data-accessory]')].map(node => node.dataset.accessory)")
        assert not set(others) & set(EDITING_KINDS), others
        page.screenshot(path=os.path.join(self.arguments.artifacts, "accessories-editing.png"))

        # Editing ends: the controls go again.
        self.listd.request("setState", view=view, dataSource=DATA_SOURCE, item="first", state={"editing": False})
        page.wait_for_function(
            "document.querySelectorAll('.cell[data-item=\"first\"] [data-accessory=delete]').length === 0", timeout=20000)
        self.the_shown_kinds_in_an_unselected_cell(self.accessories(page))
        assert not page.errors, page.errors
        page.context.close()


def main():
    run_checks(AccessoryChecks, lambda checks: [checks.every_kind_is_drawn_and_editing_controls_wait_for_editing])


if __name__ == "__main__":
    main()
