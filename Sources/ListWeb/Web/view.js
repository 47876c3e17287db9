// One data source's page: a view of it, as listview is in a terminal. It attaches through listweb, lays
// the snapshot out with the data source's layout, dequeues cells only for what is on screen (and hands
// back what leaves it), reports what is about to show (prefetch), applies each `changes` event as staged
// batch updates (animated when the change says so), and reconnects and resumes after a restart.

import { SnapshotModel } from "./model.js";
import { drawCell, drawSupplementary } from "./cells.js";
import { sectionLayout, styleSection, placeBadge, pageIsGrouped } from "./layout.js";
import { ListdSocket } from "./socket.js";
import { RovingFocus, describeCell } from "./access.js";

const ANIMATION_MS = 250;
// Index paths per dequeue: each request stays far below the largest message listweb takes (1 MiB).
const DEQUEUE_CHUNK = 1000;
// Closes the page makes itself (to attach again): not an outage.
const OWN_CLOSES = new Set(["re-attaching", "waiting", "dropped"]);

/** Whether the person asked for less motion (then nothing animates: no FLIP, no CSS transitions). */
function reducedMotion() {
  return typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

export class CollectionView {
  constructor(root, { dataSource, socketURL, actions }) {
    this.root = root;
    this.dataSource = dataSource;
    this.socketURL = socketURL;
    this.actions = actions;
    this.model = new SnapshotModel([]);
    this.version = 0;
    this.incarnation = null;
    this.viewName = null;
    this.expandsInOwnView = false;
    this.ownExpansion = Object.create(null);
    this.layout = {};
    this.sectionNodes = new Map();
    this.cellNodes = new Map();
    this.displayed = new Map(); // item → cell id listd gave it (on screen)
    this.wanted = new Set(); // items on screen waiting for a cell
    this.prefetchWanted = new Set();
    this.flushScheduled = false;
    this.status = document.getElementById("status");
    this.visibility = new IntersectionObserver((entries) => this.visibilityChanged(entries), { rootMargin: "0px" });
    this.nearness = new IntersectionObserver((entries) => this.nearnessChanged(entries), { rootMargin: "100% 100% 100% 100%" });
    this.reconnectDelay = 100;
    this.ready = false;
    this.changesApplied = 0;
    this.animationsStarted = 0;
    this.lastChangeAnimated = null;
    this.pending = [];
    this.applyScheduled = false;
    this.near = new Set(); // items in or near the viewport (what the animation measures)
    this.visible = new Set(); // items on screen
    this.focus = new RovingFocus(this.root, {
      expand: (id, open) => this.setExpanded(id, open),
      select: (id) => this.select(id),
      operable: () => !this.offline,
    });
    this.headerCount = 0;
    this.root.setAttribute("aria-label", dataSource);
    // The outage banner: shown while listd (or listweb) does not answer, with the content greyed.
    this.banner = document.createElement("div");
    this.banner.className = "outage";
    this.banner.setAttribute("role", "alert");
    this.banner.hidden = true;
    this.root.before(this.banner);
    this.offline = false;
  }

  /** Says listd cannot be reached: the banner, the content greyed (and not operable) until it is back. */
  showOutage(reason) {
    this.offline = true;
    this.banner.textContent = `listd is not answering (${reason}): what you see may be out of date. Reconnecting…`;
    this.banner.hidden = false;
    this.root.classList.add("offline");
    this.root.setAttribute("aria-busy", "true");
    this.root.setAttribute("aria-disabled", "true");
  }

  hideOutage() {
    if (!this.offline) return;
    this.offline = false;
    this.banner.hidden = true;
    this.banner.textContent = "";
    this.root.classList.remove("offline");
    this.root.removeAttribute("aria-busy");
    this.root.removeAttribute("aria-disabled");
  }

  say(text) {
    if (!this.status) return;
    this.status.textContent = text;
    this.status.title = text; // on one line, cut with an ellipsis when narrow: the whole of it on hover
  }

  // MARK: Connecting

  async start() {
    try {
      await this.connect(false);
    } catch (error) {
      this.say(`cannot attach: ${error.message}`);
      this.showOutage(error.message);
      this.scheduleReconnect();
    }
  }

  async connect(resume) {
    this.socket = new ListdSocket(this.socketURL, (event) => this.handle(event), (reason) => this.lost(reason));
    const members = { dataSource: this.dataSource };
    if (this.forceSnapshot) resume = false;
    this.forceSnapshot = false;
    if (resume && this.incarnation && Object.keys(this.ownExpansion).length === 0) {
      members.fromVersion = this.version;
      members.incarnation = this.incarnation;
    }
    if (Object.keys(this.ownExpansion).length) members.expansion = this.expansionArgument();
    let attached;
    try {
      attached = await this.socket.request("attach", members);
    } catch (error) {
      if (error.code === "data-source-not-found") {
        this.say("the data source does not exist (yet); waiting for it");
        this.socket.close("waiting");
        this.scheduleReconnect();
        return;
      }
      throw error;
    }
    this.viewName = attached.view;
    this.incarnation = attached.incarnation;
    this.expandsInOwnView = attached.expansionScope === "perView";
    if (!this.expandsInOwnView) this.ownExpansion = Object.create(null);
    this.reconnectDelay = 100;
    if (!attached.resumed) {
      const layout = await this.socket.request("layout", { dataSource: this.dataSource });
      this.layout = layout.layout || {};
      this.model = SnapshotModel.fromWire(attached.sections);
      this.version = attached.version;
      this.displayed.clear();
      this.rebuild();
    } else {
      // The missed changes follow as events; the cells of the view that went are gone with it: what is
      // on screen is dequeued again for this one.
      this.redequeueAll();
    }
    this.ready = true;
    this.hideOutage();
    this.say(`${this.dataSource} · version ${this.version} · view ${this.viewName}`);
  }

  expansionArgument() {
    const argument = Object.create(null);
    for (const [section, items] of Object.entries(this.ownExpansion)) {
      argument[section] = {
        expanded: Object.keys(items).filter((item) => items[item]),
        collapsed: Object.keys(items).filter((item) => !items[item]),
      };
    }
    return argument;
  }

  lost(reason) {
    if (this.stopped) return;
    this.ready = false;
    this.say(`disconnected (${reason}); reconnecting…`);
    if (!OWN_CLOSES.has(reason)) this.showOutage(reason);
    this.scheduleReconnect(true);
  }

  scheduleReconnect(resume = false) {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(async () => {
      try {
        await this.connect(resume);
      } catch (error) {
        this.say(`reconnecting: ${error.message}`);
        this.showOutage(error.message);
        this.scheduleReconnect(resume);
      }
    }, this.reconnectDelay);
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, 2000);
  }

  /**
   * Attaches again on a new connection: with `full`, everything anew (changes that did not fit, a
   * reload); else resuming from this version when listd still has the changes since (a missed event).
   */
  async reattach(full = true) {
    this.forceSnapshot = full;
    this.socket.close("re-attaching");
  }

  // MARK: Events

  /**
   * Events are applied once per frame, in order: a burst of changes costs one pass over the DOM and one
   * animation (each change still goes through the model stage by stage, version by version).
   */
  handle(event) {
    this.pending.push(event);
    if (this.applyScheduled) return;
    this.applyScheduled = true;
    requestAnimationFrame(() => {
      this.applyScheduled = false;
      const events = this.pending;
      this.pending = [];
      this.applyEvents(events);
    });
  }

  applyEvents(events) {
    const batch = { dirty: false, before: null, animated: false, effect: null };
    for (const event of events) {
      if (!this.ready && event.event !== "dropped") continue; // a connection on its way out
      if (!this.applyEvent(event, batch)) break;
    }
    if (batch.dirty) this.reconcile();
    if (batch.effect) {
      for (const id of batch.effect.reloaded) this.want(id);
      if (batch.before) this.animate(batch.before, batch.effect);
    }
    this.say(`${this.dataSource} · version ${this.version} · view ${this.viewName}`);
  }

  /** Applies one event to the model (and what is not the DOM's order); false when it re-attached. */
  applyEvent(event, batch) {
    switch (event.event) {
      case "changes":
        if (event.version <= this.version) return true; // already applied (resumed from an older version)
        if (event.version !== this.version + 1) return void this.reattach(false);
        if (event.changes && event.changes.reloadData) return void this.reattach();
        if (!event.view) this.ownExpansion = Object.create(null);
        return this.applyChanges(event.changes, event.version, batch);
      case "expansionChanged":
        if (event.version !== this.version) return void this.reattach();
        return this.applyChanges(event.changes, this.version, batch);
      case "layoutChanged":
        if (event.version !== this.version + 1) return void this.reattach();
        this.version = event.version;
        this.layout = event.layout || {};
        this.rebuild();
        batch.dirty = false;
        return true;
      case "cellUpdated": {
        const cell = event.cell;
        if (!cell) return true;
        // The cell may belong to an item a change of this batch inserted: the DOM first.
        if (batch.dirty) {
          this.reconcile();
          batch.dirty = false;
        }
        const node = cell.elementKind ? this.supplementaryNode(cell) : this.cellNodes.get(cell.item);
        if (node && node.dataset.cell === cell.cell) {
          if (cell.elementKind) {
            drawSupplementary(node, cell);
          } else {
            this.draw(node, cell);
          }
        }
        return true;
      }
      case "registrationChanged":
        this.redequeueAll();
        return true;
      case "dropped":
        this.say("the data source was dropped; waiting for it to be made again");
        this.model = new SnapshotModel([]);
        this.version = 0;
        this.incarnation = null;
        this.ownExpansion = Object.create(null);
        this.rebuild();
        batch.dirty = false;
        batch.effect = null;
        this.socket.close("dropped");
        return false;
      default:
        return true;
    }
  }

  applyChanges(changes, version, batch) {
    const animated = changes.animatingDifferences !== false;
    // Where cells were before the batch's first animated change: where the animation starts from.
    if (animated && !batch.before) {
      if (batch.dirty) this.reconcile();
      batch.dirty = false;
      batch.before = this.positions();
    }
    let effect;
    try {
      effect = this.model.apply(changes);
    } catch (error) {
      console.warn("changes did not fit; attaching again", error);
      return void this.reattach();
    }
    this.version = version;
    this.changesApplied += 1;
    this.lastChangeAnimated = animated;
    for (const id of effect.gone) this.forget(id);
    for (const id of effect.reloaded) {
      // A reloaded item gets a new cell: listd took the old one back.
      this.displayed.delete(id);
      if (this.cellNodes.has(id)) this.cellNodes.get(id).dataset.cell = "";
    }
    if (effect.goneSections.size || effect.reloadedSections.size) this.rebuildSupplementaries();
    // A version without stages is a cell provider change: the cells on screen are configured anew.
    if (!(changes.stages || []).length) this.redequeueAll();
    batch.dirty = true;
    if (!batch.effect) {
      batch.effect = effect;
    } else {
      for (const key of Object.keys(effect)) for (const id of effect[key]) batch.effect[key].add(id);
      for (const id of effect.gone) batch.effect.inserted.delete(id);
    }
    batch.animated = batch.animated || animated;
    return true;
  }

  forget(id) {
    this.displayed.delete(id);
    this.wanted.delete(id);
    const node = this.cellNodes.get(id);
    if (node) {
      this.visibility.unobserve(node);
      this.nearness.unobserve(node);
      node.remove();
      this.cellNodes.delete(id);
      this.near.delete(id);
      this.visible.delete(id);
    }
  }

  // MARK: The DOM

  /** Everything anew: sections, their layouts, the cells (placeholders until dequeued). */
  rebuild() {
    for (const node of this.cellNodes.values()) {
      this.visibility.unobserve(node);
      this.nearness.unobserve(node);
    }
    this.root.replaceChildren();
    this.near.clear();
    this.visible.clear();
    this.sectionNodes.clear();
    this.cellNodes.clear();
    this.displayed.clear();
    this.wanted.clear();
    // The whole page in the grouped background where the layout is grouped (as a collection view's).
    const grouped = pageIsGrouped(this.layout);
    document.documentElement.classList.toggle("page-grouped", grouped);
    document.documentElement.classList.toggle("page-plain", !grouped);
    this.reconcile();
  }

  sectionNode(id) {
    let entry = this.sectionNodes.get(id);
    if (!entry) {
      const node = document.createElement("section");
      const header = document.createElement("div");
      const items = document.createElement("div");
      const footer = document.createElement("div");
      header.className = "supplementary header";
      header.hidden = true;
      items.className = "items";
      items.setAttribute("role", "list");
      header.id = `listweb-header-${++this.headerCount}`;
      footer.className = "supplementary footer";
      footer.hidden = true;
      node.append(header, items, footer);
      node.dataset.section = id;
      const shape = styleSection(node, items, sectionLayout(this.layout, id));
      entry = { node, header, items, footer, shape, supplementariesAsked: false, tree: false };
      this.sectionNodes.set(id, entry);
    }
    return entry;
  }

  cellNode(id, entry) {
    const shape = entry.shape;
    let node = this.cellNodes.get(id);
    if (!node) {
      node = document.createElement("div");
      node.className = "cell placeholder";
      node.dataset.item = id;
      node.tabIndex = -1;
      node.setAttribute("role", entry.tree ? "treeitem" : "listitem");
      node.addEventListener("click", () => this.clicked(id));
      for (const badge of shape.badges || []) {
        const badgeNode = document.createElement("div");
        badgeNode.className = "supplementary badge";
        badgeNode.dataset.kind = badge.elementKind;
        badgeNode.hidden = true;
        placeBadge(badgeNode, badge);
        node.append(badgeNode);
      }
      this.cellNodes.set(id, node);
      this.visibility.observe(node);
      this.nearness.observe(node);
    }
    return node;
  }

  /** Puts the DOM in the model's order: sections, then each section's cells (keyed by identifier). */
  reconcile() {
    const sectionIDs = new Set(this.model.sections.map((section) => section.id));
    for (const [id, entry] of this.sectionNodes) {
      if (!sectionIDs.has(id)) {
        entry.node.remove();
        this.sectionNodes.delete(id);
      }
    }
    let previous = null;
    for (const section of this.model.sections) {
      const entry = this.sectionNode(section.id);
      const expected = previous ? previous.nextSibling : this.root.firstChild;
      if (expected !== entry.node) this.root.insertBefore(entry.node, expected);
      previous = entry.node;
      let previousCell = null;
      for (const id of section.items) {
        const node = this.cellNode(id, entry);
        const expectedCell = previousCell ? previousCell.nextSibling : entry.items.firstChild;
        if (expectedCell !== node) entry.items.insertBefore(node, expectedCell);
        previousCell = node;
      }
      // Anything after the last expected cell is not in the section any more.
      while (previousCell ? previousCell.nextSibling : entry.items.firstChild) {
        const stray = previousCell ? previousCell.nextSibling : entry.items.firstChild;
        stray.remove();
      }
      if (!entry.supplementariesAsked) {
        entry.supplementariesAsked = true;
        this.askSupplementaries(section.id);
      }
    }
    // One tab stop: the current cell while it is shown, else the first.
    this.focus.keepOneTabStop();
  }

  rebuildSupplementaries() {
    for (const entry of this.sectionNodes.values()) entry.supplementariesAsked = false;
  }

  async askSupplementaries(sectionID) {
    const entry = this.sectionNodes.get(sectionID);
    if (!entry) return;
    const index = this.model.sectionIndex(sectionID);
    const kinds = [];
    if (entry.shape.header) kinds.push([entry.header, entry.shape.headerKind || "header"]);
    if (entry.shape.footer) kinds.push([entry.footer, entry.shape.footerKind || "footer"]);
    for (const [node, kind] of kinds) {
      try {
        const reply = await this.socket.request("dequeueSupplementary", { view: this.viewName, elementKind: kind, indexPath: [index, 0] });
        node.hidden = false;
        node.dataset.kind = kind;
        drawSupplementary(node, reply.cell);
        if (entry.shape.pinnedHeader && node === entry.header) node.classList.add("pinned");
        if (node === entry.header) entry.items.setAttribute("aria-labelledby", node.id);
      } catch {
        node.hidden = true; // no provider for it: nothing to show
      }
    }
  }

  supplementaryNode(cell) {
    if (cell.item) {
      const owner = this.cellNodes.get(cell.item);
      return owner && owner.querySelector(`.badge[data-kind="${CSS.escape(cell.elementKind)}"]`);
    }
    const entry = this.sectionNodes.get(cell.section);
    if (!entry) return null;
    return cell.elementKind === (entry.shape.footerKind || "footer") ? entry.footer : entry.header;
  }

  // MARK: Visibility: dequeue what shows, hand back what leaves, prefetch what is near

  visibilityChanged(entries) {
    const ended = [];
    for (const entry of entries) {
      const id = entry.target.dataset.item;
      if (entry.isIntersecting) {
        this.visible.add(id);
        this.want(id);
      } else {
        this.visible.delete(id);
        this.wanted.delete(id);
        const cell = this.displayed.get(id);
        if (cell) {
          ended.push(cell);
          this.displayed.delete(id);
          entry.target.dataset.cell = "";
        }
      }
    }
    if (ended.length && this.ready) this.socket.request("endDisplaying", { view: this.viewName, cells: ended }).catch(() => {});
  }

  nearnessChanged(entries) {
    for (const entry of entries) {
      const id = entry.target.dataset.item;
      if (entry.isIntersecting) {
        this.near.add(id);
        if (!this.displayed.has(id)) this.prefetchWanted.add(id);
      } else {
        this.near.delete(id);
      }
    }
    this.scheduleFlush();
  }

  want(id) {
    if (!this.cellNodes.has(id)) return;
    this.wanted.add(id);
    this.scheduleFlush();
  }

  redequeueAll() {
    for (const id of this.displayed.keys()) this.wanted.add(id);
    this.displayed.clear();
    this.scheduleFlush();
  }

  scheduleFlush() {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    requestAnimationFrame(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** One dequeue for every cell that came on screen, one prefetch for what is about to. */
  async flush() {
    if (!this.ready) return;
    // Events not applied yet would make the index paths old ones: after them.
    if (this.pending.length) return void this.scheduleFlush();
    const items = [...this.wanted].filter((id) => !this.displayed.has(id));
    this.wanted.clear();
    const paths = [];
    for (const id of items) {
      const path = this.model.indexPathOf(id);
      if (path) paths.push(path);
    }
    const prefetch = [...this.prefetchWanted].map((id) => this.model.indexPathOf(id)).filter(Boolean);
    this.prefetchWanted.clear();
    if (prefetch.length) this.socket.request("prefetch", { view: this.viewName, indexPaths: prefetch }).catch(() => {});
    if (!paths.length) return;
    const cells = [];
    try {
      const parts = [];
      for (let start = 0; start < paths.length; start += DEQUEUE_CHUNK) parts.push(paths.slice(start, start + DEQUEUE_CHUNK));
      const replies = await Promise.all(parts.map((part) => this.socket.request("dequeue", { view: this.viewName, indexPaths: part })));
      for (const reply of replies) cells.push(...(reply.cells || []));
    } catch (error) {
      if (error.code === "index-out-of-range") {
        // A change overtook the request: ask again for what is on screen now.
        for (const id of items) this.wanted.add(id);
        this.scheduleFlush();
      }
      return;
    }
    // listd may be a change ahead (its event on the way): an item it did not serve at its old index
    // path is asked for again.
    const served = new Set(cells.map((cell) => cell.item));
    const missed = items.filter((id) => !served.has(id) && this.visible.has(id) && !this.displayed.has(id));
    if (missed.length) {
      for (const id of missed) this.wanted.add(id);
      this.scheduleFlush();
    }
    for (const cell of cells) {
      const node = this.cellNodes.get(cell.item);
      if (!node) continue;
      if (cell.cell) this.displayed.set(cell.item, cell.cell);
      const badges = this.draw(node, cell);
      for (const badge of badges) this.dequeueBadge(cell, badge);
    }
  }

  async dequeueBadge(cell, badge) {
    try {
      const path = this.model.indexPathOf(cell.item);
      if (!path) return;
      const reply = await this.socket.request("dequeueSupplementary", { view: this.viewName, elementKind: badge.dataset.kind, indexPath: path });
      drawSupplementary(badge, reply.cell);
    } catch {
      badge.hidden = true;
    }
  }

  // MARK: Actions (listweb started with --allow-actions)

  /** A click: on a parent row of an outline (the whole row, as its chevron), opens or closes it; else selects. */
  clicked(id) {
    const node = this.cellNodes.get(id);
    if (node && node.hasAttribute("aria-expanded")) return this.setExpanded(id, node.getAttribute("aria-expanded") !== "true");
    return this.select(id);
  }

  /** Opens (`expand`) or closes a parent row of an outline, in this view. */
  async setExpanded(id, expand) {
    if (!this.actions) {
      this.say("read-only: listweb was started without --allow-actions");
      return;
    }
    const path = this.model.indexPathOf(id);
    if (!path) return;
    const section = this.model.sections[path[0]].id;
    if (!this.expandsInOwnView) {
      // The data source's outline is shared by every view: a page changes its own view only.
      this.say("the outline's expansion is shared by every view: a page expands only where the data source lets views expand on their own (expansion scope perView)");
      return;
    }
    try {
      await this.socket.request(expand ? "expandInView" : "collapseInView", { view: this.viewName, section, items: [id] });
      (this.ownExpansion[section] ||= Object.create(null))[id] = expand;
    } catch (error) {
      this.say(`refused: ${error.message}`);
    }
  }

  /** Selects a cell, or deselects a selected one (setState). */
  async select(id) {
    if (!this.actions) {
      this.say("read-only: listweb was started without --allow-actions");
      return;
    }
    const node = this.cellNodes.get(id);
    try {
      const selected = node && node.classList.contains("selected");
      const reply = await this.socket.request("setState", { view: this.viewName, item: id, state: { selected: !selected } });
      if (reply.cell && node) this.draw(node, reply.cell);
    } catch (error) {
      this.say(`refused: ${error.message}`);
    }
  }

  // MARK: Drawing

  /** Draws a dequeued cell into its node (keeping its badges) with its role and states; the badges. */
  draw(node, cell) {
    const badges = [...node.querySelectorAll(":scope > .badge")];
    drawCell(node, cell);
    node.append(...badges);
    const section = node.closest("section");
    describeCell(node, cell, this.sectionNodes.get(section && section.dataset.section));
    return badges;
  }

  // MARK: Animation (FLIP: first positions, last positions, invert, play)

  /** Where the cells in or near the viewport are (only those can be seen to move). */
  positions() {
    const positions = new Map();
    for (const id of this.near) {
      const node = this.cellNodes.get(id);
      if (node) positions.set(id, node.getBoundingClientRect());
    }
    return positions;
  }

  animate(before, effect) {
    if (reducedMotion()) return; // the change is applied at once, nothing moves
    for (const id of new Set([...this.near, ...effect.inserted])) {
      const node = this.cellNodes.get(id);
      if (!node) continue;
      if (effect.inserted.has(id)) {
        node.animate([{ opacity: 0, transform: "scale(0.96)" }, { opacity: 1, transform: "none" }], { duration: ANIMATION_MS, easing: "ease-out" });
        this.animationsStarted += 1;
        node.classList.add("changed");
        setTimeout(() => node.classList.remove("changed"), ANIMATION_MS * 2);
        continue;
      }
      const first = before.get(id);
      if (!first) continue;
      const last = node.getBoundingClientRect();
      const dx = first.left - last.left;
      const dy = first.top - last.top;
      if (dx || dy) {
        node.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], { duration: ANIMATION_MS, easing: "ease-in-out" });
        this.animationsStarted += 1;
      }
      if (effect.reconfigured.has(id) || effect.reloaded.has(id) || effect.moved.has(id)) {
        node.classList.add("changed");
        setTimeout(() => node.classList.remove("changed"), ANIMATION_MS * 2);
      }
    }
  }

  // MARK: For tests and the curious: what the page shows, in order

  /** The item identifiers in DOM order, by section: [[section, [items]]]. */
  domOrder() {
    return [...this.root.querySelectorAll(":scope > section")].map((section) => [
      section.dataset.section, [...section.querySelectorAll(":scope > .items > .cell")].map((cell) => cell.dataset.item),
    ]);
  }
}
