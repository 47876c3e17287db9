#!/usr/bin/env python3
"""listweb in Chromium redraws a reloaded item from the registration its rules pick now (issue 45, the
to-do case): rule `match done=true -> todoDone`, default `todoOpen`.

    reload_redraw_test.py --bin .build/debug --artifacts .build/artifacts/listweb

Uses listweb_test.py's listd, listweb and browser helpers. Exit status 0 when every check passes.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listweb_test import Checks, run_checks, wait_until  # noqa: E402  (after the path it is found on)


class ReloadChecks(Checks):
    def todo_page(self, data_source):
        """A to-do list `data_source` (milk and eggs, not done) with the rule, and a page showing it."""
        self.listd.request("register", registration="todoOpen", contentConfiguration={"type": "cell", "text": "open {{title}}"}, replace=True)
        self.listd.request("register", registration="todoDone", contentConfiguration={"type": "cell", "text": "done {{title}}"}, replace=True)
        items = [{"id": "milk", "data": {"title": "Milk", "done": False}}, {"id": "eggs", "data": {"title": "Eggs", "done": False}}]
        self.listd.request("apply", dataSource=data_source, snapshot={"sections": [{"id": "today", "items": items}]})
        self.listd.request("setCellProvider", dataSource=data_source, default="todoOpen",
                           rules=[{"match": {"field": "done", "equals": True}, "registration": "todoDone"}])
        page = self.page(self.reader, f"/sources/{data_source}")
        self.wait_for_text(page, "milk", "open Milk")
        return page

    @staticmethod
    def wait_for_text(page, item, text):
        page.wait_for_function(
            f"(document.querySelector('.cell[data-item=\"{item}\"]') || {{}}).textContent?.includes({text!r})", timeout=20000)

    @staticmethod
    def text_of(page, item):
        return page.evaluate(f"document.querySelector('.cell[data-item=\"{item}\"]').textContent")

    def a_reloaded_item_shows_its_new_registration(self):
        page = self.todo_page("todoReload")
        self.listd.request("updateItems", dataSource="todoReload", items=[{"id": "milk", "data": {"title": "Milk", "done": True}}])
        self.listd.request("reloadItems", dataSource="todoReload", items=["milk"])
        self.wait_for_version(page, "todoReload")
        self.wait_for_text(page, "milk", "done Milk")
        assert "open" not in self.text_of(page, "milk"), self.text_of(page, "milk")
        assert not page.errors, page.errors
        page.context.close()

    def view_cells(self, data_source):
        """(displayed, dequeued) of the page's view of `data_source`, as listd counts them."""
        views = [view for view in self.listd.request("stats")["cells"]["views"] if view["dataSource"] == data_source]
        assert len(views) == 1, views
        return views[0]["displayed"], views[0]["created"] + views[0]["reused"]

    def a_reloaded_sections_items_get_new_cells(self):
        """listd takes back the cells of a reloaded section's items: the page dequeues them anew (before,
        it kept showing cells listd no longer had)."""
        page = self.todo_page("todoSection")
        self.wait_for_text(page, "eggs", "open Eggs")
        wait_until(lambda: self.view_cells("todoSection")[0] == 2, "both cells displayed")
        _, dequeued = self.view_cells("todoSection")
        self.listd.request("reloadSections", dataSource="todoSection", sections=["today"])
        self.wait_for_version(page, "todoSection")
        wait_until(lambda: self.view_cells("todoSection") == (2, dequeued + 2), "the reloaded section's two cells dequeued anew", timeout=10)
        self.wait_for_text(page, "eggs", "open Eggs")
        assert not page.errors, page.errors
        page.context.close()

    def an_update_that_changes_the_registration_redraws(self):
        """Needs listd to turn the reconfigure into a reload (issue 45 point 2, the engine's part)."""
        page = self.todo_page("todoUpdate")
        self.listd.request("updateItems", dataSource="todoUpdate", items=[{"id": "milk", "data": {"title": "Milk", "done": True}}])
        self.wait_for_version(page, "todoUpdate")
        self.wait_for_text(page, "milk", "done Milk")
        page.context.close()


def main():
    run_checks(ReloadChecks, lambda checks: [
        checks.a_reloaded_item_shows_its_new_registration, checks.a_reloaded_sections_items_get_new_cells,
        checks.an_update_that_changes_the_registration_redraws])


if __name__ == "__main__":
    main()
