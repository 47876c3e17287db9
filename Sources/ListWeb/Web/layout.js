// A data source's compositional layout (the `layout` query's JSON, PROTOCOL.md "Layouts") as CSS: lists
// with their appearances, groups of items in rows or columns, sections that scroll sideways with their
// scrolling behaviours, headers and footers (pinned or not), and badges anchored to items.
//
// Layout sizes are in terminal cells; a browser scales them to points as the seeds draw them: a column
// is 6.25 px (375 points are 60 columns), a row 40 px.

export const COLUMN = 6.25;
export const ROW = 40;

/** The layout of one section: the section's entry, else the default, else a plain list. */
export function sectionLayout(layout, section) {
  const sections = (layout && layout.sections) || {};
  return (Object.hasOwn(sections, section) && sections[section]) || (layout && layout.default) || { list: { appearance: "plain" } };
}

/** A length along the width, in CSS, from a dimension: a fraction of `base` (a CSS length), or cells. */
function widthOf(dimension, base) {
  if (!dimension) return base;
  if (dimension.fractionalWidth !== undefined) return `calc(${dimension.fractionalWidth} * ${base})`;
  if (dimension.absolute !== undefined) return `${dimension.absolute * COLUMN}px`;
  if (dimension.estimated !== undefined) return `${dimension.estimated * COLUMN}px`;
  if (dimension.fractionalHeight !== undefined) return `calc(${dimension.fractionalHeight} * ${base})`;
  return base;
}

/** A height in px from a dimension, with `base` the container's height in px. */
function heightOf(dimension, base, width) {
  if (!dimension) return base;
  if (dimension.fractionalHeight !== undefined) return dimension.fractionalHeight * base;
  if (dimension.absolute !== undefined) return dimension.absolute * ROW;
  if (dimension.estimated !== undefined) return dimension.estimated * ROW;
  // A height given as a fraction of the width (in px when known), as UIKit's square cells.
  if (dimension.fractionalWidth !== undefined && width !== undefined) return dimension.fractionalWidth * width;
  return base;
}

/** The px value of a width dimension when it is absolute (else undefined). */
function absoluteWidth(dimension) {
  if (!dimension) return undefined;
  if (dimension.absolute !== undefined) return dimension.absolute * COLUMN;
  if (dimension.estimated !== undefined) return dimension.estimated * COLUMN;
  return undefined;
}

/**
 * How a compositional section's items are placed: how many items a group holds, each item's size, the
 * group's, and the spacing. Mirrors listview's layout (Sources/ListLayout), in CSS units.
 */
export function groupShape(entry) {
  const group = entry.group || { axis: "horizontal", width: { fractionalWidth: 1 }, height: { absolute: 1 }, count: 1 };
  const horizontal = group.axis !== "vertical";
  const item = (group.subitems && group.subitems[0]) || group.item || entry.item || { width: { fractionalWidth: 1 }, height: { fractionalHeight: 1 } };
  const groupHeight = heightOf(group.height, ROW, absoluteWidth(group.width));
  let count = group.count;
  if (!Number.isInteger(count) || count < 1) {
    const along = horizontal ? item.width : item.height;
    const fraction = along && (horizontal ? along.fractionalWidth : along.fractionalHeight);
    if (fraction) {
      count = Math.max(1, Math.floor(1 / fraction + 1e-9));
    } else if (horizontal && along && along.absolute !== undefined && absoluteWidth(group.width) !== undefined) {
      count = Math.max(1, Math.floor(absoluteWidth(group.width) / (along.absolute * COLUMN)));
    } else if (!horizontal && along && along.absolute !== undefined) {
      count = Math.max(1, Math.floor(groupHeight / (along.absolute * ROW)));
    } else {
      count = 1;
    }
  }
  const groupWidth = widthOf(group.width, "var(--content-width)");
  const spacing = (group.interItemSpacing || 0) * COLUMN;
  const itemWidth = horizontal
    ? (group.count ? `calc((${groupWidth} - ${(count - 1) * spacing}px) / ${count})` : widthOf(item.width, groupWidth))
    : widthOf(item.width, groupWidth);
  const itemHeight = horizontal ? heightOf(item.height, groupHeight) : (group.count ? (groupHeight - (count - 1) * spacing) / count : heightOf(item.height, groupHeight));
  return { horizontal, count, groupWidth, groupHeight, itemWidth, itemHeight, spacing, item };
}

/** Sets the classes and CSS variables of a section element and its items container from its layout. */
export function styleSection(sectionNode, itemsNode, entry) {
  sectionNode.className = "section";
  itemsNode.removeAttribute("style");
  const insets = entry.contentInsets || {};
  sectionNode.style.setProperty("--inset-leading", `${(insets.leading || 0) * COLUMN}px`);
  sectionNode.style.setProperty("--inset-trailing", `${(insets.trailing || 0) * COLUMN}px`);
  sectionNode.style.setProperty("--inset-top", `${(insets.top || 0) * ROW}px`);
  sectionNode.style.setProperty("--inset-bottom", `${(insets.bottom || 0) * ROW}px`);
  if (entry.list) {
    const list = entry.list;
    sectionNode.classList.add("list", `appearance-${list.appearance || "plain"}`);
    if (list.showsSeparators === false) sectionNode.classList.add("no-separators");
    if (list.pinsHeaderToVisibleBounds) sectionNode.classList.add("pinned-header");
    return { list: true, header: list.headerMode === "supplementary", footer: list.footerMode === "supplementary", firstItemHeader: list.headerMode === "firstItemInSection" };
  }
  const shape = groupShape(entry);
  const behavior = entry.orthogonalScrollingBehavior || "none";
  sectionNode.classList.add("grid");
  itemsNode.style.setProperty("--item-height", `${shape.itemHeight}px`);
  itemsNode.style.setProperty("--item-width", shape.itemWidth);
  itemsNode.style.setProperty("--group-width", shape.groupWidth);
  itemsNode.style.setProperty("--group-height", `${shape.groupHeight}px`);
  itemsNode.style.setProperty("--inter-item", `${shape.spacing}px`);
  itemsNode.style.setProperty("--inter-group", `${(entry.interGroupSpacing || 0) * (behavior === "none" ? ROW : COLUMN)}px`);
  itemsNode.style.setProperty("--per-group", String(shape.count));
  if (behavior !== "none") {
    sectionNode.classList.add("orthogonal", `scroll-${behavior}`);
    itemsNode.style.gridTemplateRows = shape.horizontal ? "var(--item-height)" : `repeat(${shape.count}, var(--item-height))`;
    itemsNode.style.gridAutoColumns = shape.horizontal ? "var(--item-width)" : "var(--group-width)";
    // Between groups the section's spacing, within a group the group's.
    itemsNode.style.columnGap = shape.horizontal && shape.count > 1 ? "var(--inter-item)" : "var(--inter-group)";
  } else {
    itemsNode.style.gridTemplateColumns = shape.horizontal ? `repeat(${shape.count}, var(--item-width))` : "var(--item-width)";
    itemsNode.style.gridAutoRows = "var(--item-height)";
    itemsNode.style.columnGap = "var(--inter-item)";
    itemsNode.style.rowGap = shape.horizontal ? "var(--inter-group)" : "var(--inter-item)";
  }
  itemsNode.dataset.perGroup = String(shape.count);
  return {
    list: false, header: !!entry.header, footer: !!entry.footer, headerKind: (entry.header && entry.header.elementKind) || "header",
    footerKind: (entry.footer && entry.footer.elementKind) || "footer", pinnedHeader: !!(entry.header && entry.header.pinToVisibleBounds),
    headerHeight: ((entry.header && entry.header.height) || 1) * ROW, footerHeight: ((entry.footer && entry.footer.height) || 1) * ROW,
    badges: (shape.item && shape.item.supplementaryItems) || [], groupLeading: behavior !== "none" && behavior !== "continuous" && behavior !== "paging",
  };
}

// A badge's height in rows is lines of a badge: 20 points each (Apple's badge sample draws 20-point badges;
// a terminal row is one line of text).
export const BADGE_LINE = 20;

/**
 * Places a badge (an item-anchored supplementary item) in its cell, as its container anchor says. Its
 * layout width is its least width: it grows with its text ("12", "999+") and never wraps.
 */
export function placeBadge(node, badge) {
  const anchor = badge.containerAnchor || {};
  const edges = anchor.edges || [];
  const offset = anchor.fractionalOffset || {};
  const absolute = anchor.absoluteOffset || {};
  node.style.position = "absolute";
  node.style.minWidth = `max(20px, ${widthOf(badge.width, "0px").replace("var(--content-width)", "100%")})`;
  node.style.height = badge.height && badge.height.absolute !== undefined ? `${Math.max(1, badge.height.absolute) * BADGE_LINE}px` : "";
  const x = edges.includes("leading") ? "0%" : edges.includes("trailing") ? "100%" : "50%";
  const y = edges.includes("top") ? "0%" : edges.includes("bottom") ? "100%" : "50%";
  node.style.left = x;
  node.style.top = y;
  // The view's own anchor point sits on the container's, then moves by its fractional offset.
  const ownX = edges.includes("leading") ? 0 : edges.includes("trailing") ? -100 : -50;
  const ownY = edges.includes("top") ? 0 : edges.includes("bottom") ? -100 : -50;
  node.style.transform = `translate(calc(${ownX + (offset.x || 0) * 100}% + ${(absolute.x || 0) * COLUMN}px), calc(${ownY + (offset.y || 0) * 100}% + ${(absolute.y || 0) * BADGE_LINE}px))`;
}

/** Appearances drawn on systemGroupedBackground. */
const GROUPED_APPEARANCES = new Set(["grouped", "insetGrouped", "sidebar"]);

/**
 * Whether the page is grouped (its background systemGroupedBackground, as a collection view's with a
 * grouped list layout): the default section is a grouped, inset grouped or sidebar list, or, without a
 * default, every section the layout names is one.
 */
export function pageIsGrouped(layout) {
  const grouped = (entry) => !!(entry && entry.list && GROUPED_APPEARANCES.has(entry.list.appearance));
  if (layout && layout.default) return grouped(layout.default);
  const named = Object.values((layout && layout.sections) || {});
  return named.length > 0 && named.every(grouped);
}
