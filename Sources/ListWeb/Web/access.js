// listweb without a mouse: the roles and states assistive technology reads on each cell, and the
// keyboard (one tab stop, the current cell; arrows between cells, Enter or Space selects, Right and Left
// open and close an outline's rows, Left on a child goes to its parent; the WAI-ARIA tree pattern).

/**
 * The role and states of a cell: an item of a list, or of a tree once its section shows an outline (a
 * cell with an outline disclosure or an indentation), with its level and whether it is open; selected,
 * disabled. `entry` is the cell's section ({items, tree}); it becomes a tree at its first outline row.
 */
export function describeCell(node, cell, entry) {
  const accessories = Array.isArray(cell.accessories) ? cell.accessories : [];
  const disclosure = accessories.find((accessory) => accessory && accessory.type === "outlineDisclosure");
  const level = Number.isInteger(cell.indentationLevel) ? cell.indentationLevel : 0;
  if (entry && !entry.tree && (disclosure || level > 0)) {
    entry.tree = true;
    entry.items.setAttribute("role", "tree");
    for (const other of entry.items.querySelectorAll(":scope > .cell")) other.setAttribute("role", "treeitem");
  }
  const tree = !!(entry && entry.tree);
  node.setAttribute("role", tree ? "treeitem" : "listitem");
  if (tree) node.setAttribute("aria-level", String(level + 1));
  else node.removeAttribute("aria-level");
  if (disclosure && disclosure.hidden !== true) node.setAttribute("aria-expanded", String(disclosure.expanded === true));
  else node.removeAttribute("aria-expanded");
  const state = cell.state || {};
  node.setAttribute("aria-selected", String(!!state.selected));
  if (state.disabled) node.setAttribute("aria-disabled", "true");
  else node.removeAttribute("aria-disabled");
}

/**
 * The keyboard in a view's root: the current cell is its one tab stop (roving tabindex). `actions` are
 * the view's: `expand(id, open)`, `select(id)` and `operable()` (false while listd is away).
 */
export class RovingFocus {
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.current = null;
    root.addEventListener("keydown", (key) => this.keyDown(key));
    root.addEventListener("focusin", (focus) => {
      const cell = focus.target.closest && focus.target.closest(".cell");
      if (cell && root.contains(cell)) this.makeCurrent(cell);
    });
  }

  /** After a redraw: the current cell stays the tab stop while it is shown, else the first cell is. */
  keepOneTabStop() {
    const current = this.current && this.current.isConnected ? this.current : this.root.querySelector(".items > .cell");
    if (current) this.makeCurrent(current);
  }

  makeCurrent(node) {
    if (this.current === node && node.tabIndex === 0) return;
    if (this.current && this.current !== node) this.current.tabIndex = -1;
    this.current = node;
    node.tabIndex = 0;
  }

  focusCell(node) {
    if (!node) return;
    this.makeCurrent(node);
    node.focus();
  }

  /** The parent row of a child row of an outline: the nearest row before it one level up. */
  parentOf(node) {
    const level = Number(node.getAttribute("aria-level") || 1);
    if (level <= 1) return null;
    for (let row = node.previousElementSibling; row; row = row.previousElementSibling) {
      if (row.classList.contains("cell") && Number(row.getAttribute("aria-level") || 1) < level) return row;
    }
    return null;
  }

  keyDown(key) {
    if (key.altKey || key.ctrlKey || key.metaKey) return;
    const node = key.target.closest && key.target.closest(".cell");
    if (!node || !this.root.contains(node) || !this.actions.operable()) return;
    const cells = [...this.root.querySelectorAll(":scope > section > .items > .cell")];
    const index = cells.indexOf(node);
    const id = node.dataset.item;
    const tree = node.getAttribute("role") === "treeitem";
    const expanded = node.getAttribute("aria-expanded");
    switch (key.key) {
      case "ArrowDown":
        this.focusCell(cells[index + 1]);
        break;
      case "ArrowUp":
        this.focusCell(cells[index - 1]);
        break;
      case "ArrowRight":
        // (On an end row of a tree, Right does nothing.)
        if (tree && expanded === "false") this.actions.expand(id, true);
        else if (!tree || expanded === "true") this.focusCell(cells[index + 1]);
        break;
      case "ArrowLeft":
        if (tree && expanded === "true") this.actions.expand(id, false);
        else if (tree) this.focusCell(this.parentOf(node));
        else this.focusCell(cells[index - 1]);
        break;
      case "Home":
        this.focusCell(cells[0]);
        break;
      case "End":
        this.focusCell(cells[cells.length - 1]);
        break;
      case "Enter":
      case " ":
        this.actions.select(id);
        break;
      default:
        return;
    }
    key.preventDefault();
  }
}
