// Draws a dequeued cell (listd's content configuration, background, accessories and state) into a DOM
// element. Everything listd sends is data: it is inserted as text (textContent), never as HTML, and an
// image is shown from an http(s) or data:image URL only; any other string is drawn as a symbol (text).

/** UIKit's semantic and system colours, as the custom properties style.css defines (light and dark). */
const NAMED_COLORS = [
  "label", "secondaryLabel", "tertiaryLabel", "quaternaryLabel", "systemBackground", "secondarySystemBackground",
  "tertiarySystemBackground", "systemGroupedBackground", "secondarySystemGroupedBackground", "tertiarySystemGroupedBackground",
  "separator", "opaqueSeparator", "systemBlue", "systemRed", "systemGreen", "systemOrange", "systemYellow", "systemPink",
  "systemPurple", "systemTeal", "systemIndigo", "systemGray", "systemGray2", "systemGray3", "systemGray4", "systemGray5",
  "systemGray6", "systemFill", "tintColor",
];
const colors = {
  ...Object.fromEntries(NAMED_COLORS.map((name) => [name, `var(--${name})`])),
  tint: "var(--tintColor)", accent: "var(--tintColor)", accentColor: "var(--tintColor)",
  clear: "transparent", white: "#fff", black: "#000",
};
/** UIKit's text styles at the default size (points = CSS px): weight, size, leading. */
export const TEXT_STYLES = {
  largeTitle: [400, 34, 41], title1: [400, 28, 34], title2: [400, 22, 28], title3: [400, 20, 25], headline: [600, 17, 22],
  body: [400, 17, 22], callout: [400, 16, 21], subheadline: [400, 15, 20], footnote: [400, 13, 18], caption1: [400, 12, 16],
  caption2: [400, 11, 13], extraLargeTitle: [700, 36, 43], extraLargeTitle2: [700, 28, 34],
};
const FONT_FAMILY = 'system-ui, -apple-system, "Noto Sans", "Noto Sans CJK KR", sans-serif';

/** A CSS colour from a semantic name, #rgb(a) or rgb()/rgba(); anything else is left out. */
export function cssColor(value) {
  if (typeof value !== "string") return null;
  if (Object.hasOwn(colors, value)) return colors[value];
  if (/^#[0-9a-fA-F]{3,8}$/.test(value)) return value;
  if (/^rgba?\(\s*[\d.]+\s*,\s*[\d.]+\s*,\s*[\d.]+\s*(,\s*[\d.]+\s*)?\)$/.test(value)) return value;
  return null;
}

/** A CSS font shorthand from a text style name ("body", "title3.bold"), at UIKit's size and leading. */
export function cssFont(value) {
  if (typeof value !== "string") return null;
  const [name, weight] = value.split(".");
  if (!Object.hasOwn(TEXT_STYLES, name)) return null;
  const [regular, size, leading] = TEXT_STYLES[name];
  const bold = weight === "bold" ? 700 : weight === "semibold" ? 600 : regular;
  return `${bold} ${size}px/${leading}px ${FONT_FAMILY}`;
}

let imageOrigins = new Set();

/** The origins listweb lets cells load images from (its --image-origins; its CSP allows the same). */
export function setImageOrigins(origins) {
  imageOrigins = new Set(origins);
}

/**
 * Whether an image string may be loaded as an image (else it is drawn as a symbol, as text): a data: image,
 * or an http(s) URL of an origin listweb was told to show images from (--image-origins).
 */
export function isImageURL(value) {
  if (typeof value !== "string") return false;
  if (/^data:image\/(png|jpeg|gif|webp|svg\+xml);/i.test(value)) return true;
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    return imageOrigins.has(new URL(value).origin);
  } catch {
    return false;
  }
}

function escapeCodePoint(character) {
  const code = character.codePointAt(0);
  const hex = code.toString(16).toUpperCase();
  return code > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, "0")}`;
}

const LOOKALIKE_SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Greek}/u, /\p{Script=Cyrillic}/u];

/**
 * A name as it may be shown: characters that change how it reads shown as visible escapes (\u202E):
 * controls, format characters (bidirectional overrides and isolates, zero-width ones), separators other
 * than the space, private-use and unassigned code points, fullwidth forms of ASCII, and, in a name that
 * mixes Latin, Greek and Cyrillic letters, the letters of all but its main script (lookalikes such as a
 * Cyrillic "а" among Latin letters). A backslash is doubled, so an escape always means one.
 */
export function visibleName(name) {
  const characters = [...String(name)];
  const counts = LOOKALIKE_SCRIPTS.map((script) => characters.filter((c) => /\p{L}/u.test(c) && script.test(c)).length);
  const mixed = counts.filter((count) => count > 0).length > 1;
  // The main script: the most letters (Latin on a tie).
  const main = counts.indexOf(Math.max(...counts));
  return characters.map((c) => {
    if (c === "\\") return "\\\\";
    if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u.test(c) || (/\s/u.test(c) && c !== " ")) return escapeCodePoint(c);
    if (/[\uFF01-\uFF5E]/u.test(c)) return escapeCodePoint(c);
    if (mixed && /\p{L}/u.test(c) && LOOKALIKE_SCRIPTS.some((script, index) => index !== main && script.test(c))) return escapeCodePoint(c);
    return c;
  }).join("");
}

function setVariable(node, name, value) {
  if (value) node.style.setProperty(name, value);
  else node.style.removeProperty(name);
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function applyTextProperties(node, properties) {
  if (!properties || typeof properties !== "object") return;
  const color = cssColor(properties.color);
  if (color) node.style.color = color;
  const font = cssFont(properties.font);
  if (font) node.style.font = font;
  if (properties.transform === "uppercase") node.style.textTransform = "uppercase";
  if (properties.transform === "lowercase") node.style.textTransform = "lowercase";
  if (properties.transform === "capitalized") node.style.textTransform = "capitalize";
  if (Number.isInteger(properties.numberOfLines) && properties.numberOfLines > 0) {
    node.classList.add("clamped");
    node.style.webkitLineClamp = String(properties.numberOfLines);
  }
  if (properties.alignment === "center") node.style.textAlign = "center";
  if (properties.alignment === "justified") node.style.textAlign = "justify";
}

/** The first line of a text an accessory shows (a label's, a custom view's, a menu's choice). */
function firstLine(value) {
  return typeof value === "string" ? value.split(/\r?\n|\r/)[0] : "";
}

/**
 * An accessory's element, as UIKit draws its kind; `null` for one that shows nothing (a label or custom
 * view without text).
 */
function accessoryNode(accessory, state) {
  switch (accessory.type) {
    case "disclosureIndicator": return element("span", "accessory disclosure", "›");
    case "checkmark": return element("span", "accessory checkmark", "✓");
    case "detail": return element("span", "accessory detail", "ⓘ");
    case "delete": return element("span", "accessory delete", "⊖");
    case "insert": return element("span", "accessory insert", "⊕");
    case "reorder": return element("span", "accessory reorder", "≡");
    case "multiselect": return element("span", "accessory multiselect", state.selected ? "◉" : "○");
    case "label": return firstLine(accessory.text) ? element("span", "accessory label", firstLine(accessory.text)) : null;
    case "customView": return firstLine(accessory.text) ? element("span", "accessory custom", firstLine(accessory.text)) : null;
    case "outlineDisclosure": {
      // A chevron that turns down when open (style.css); the row is the control (view.js): the chevron is
      // not a tab stop of its own.
      const chevron = element("button", `accessory outline${accessory.expanded ? " expanded" : ""}`, "›");
      chevron.tabIndex = -1;
      chevron.setAttribute("aria-hidden", "true");
      return chevron;
    }
    case "popUpMenu": {
      const choice = firstLine(accessory.selectedElement);
      return element("span", "accessory popup", choice ? `${choice} ⌃⌄` : "⌃⌄");
    }
    default: return element("span", "accessory", firstLine(accessory.text));
  }
}

/**
 * Applies every accessory's options to its element: `hidden` keeps its place but shows nothing (as
 * UIKit's isHidden), `tintColor` colours it, a `reservedLayoutWidth` in points reserves that width (the
 * accessory centred in it), a label's `font`, an editing control's `backgroundColor`.
 */
function applyAccessoryOptions(node, accessory) {
  node.dataset.accessory = typeof accessory.type === "string" ? accessory.type : "";
  if (accessory.hidden === true) node.classList.add("hidden");
  const tint = cssColor(accessory.tintColor);
  if (tint) node.style.color = tint;
  if (Number.isFinite(accessory.reservedLayoutWidth) && accessory.reservedLayoutWidth > 0) {
    node.style.minWidth = `${accessory.reservedLayoutWidth}px`;
    node.style.textAlign = "center";
  }
  const font = accessory.type === "label" ? cssFont(accessory.font) : null;
  if (font) node.style.font = font;
  const background = cssColor(accessory.backgroundColor);
  if (background) {
    node.style.backgroundColor = background;
    node.classList.add("filled");
  }
}

/** Whether UIKit places an accessory at the cell's leading edge (else the trailing edge). */
function isLeading(accessory) {
  return ["delete", "insert", "multiselect", "outlineDisclosure"].includes(accessory.type)
    || (accessory.type === "customView" && accessory.placement === "leading");
}

/**
 * Fills `node` (the cell's element) from a cell object of `dequeue`, `dequeueSupplementary` or
 * `cellUpdated`. Returns nothing; the node's dataset keeps the cell id.
 */
export function drawCell(node, cell) {
  node.replaceChildren();
  node.dataset.cell = cell.cell ?? "";
  node.classList.remove("error", "selected", "highlighted", "disabled", "placeholder");
  const state = cell.state || {};
  for (const flag of ["selected", "highlighted", "disabled"]) if (state[flag]) node.classList.add(flag);
  if (cell.error) {
    // A cell that failed: drawn as an error cell with listd's message (as text).
    node.classList.add("error");
    node.append(element("span", "error-code", cell.error.code), element("span", "error-message", cell.error.message));
    node.title = `${cell.error.code}: ${cell.error.message}`;
    return;
  }
  const content = cell.content || {};
  // The background configuration, as custom properties the section's appearance uses (style.css): a card
  // in a compositional section takes all of it; a list row takes its colour and stroke (its corners are
  // the list's: an inset grouped section rounds its first and last row).
  const background = cell.background || {};
  const backgroundColor = cssColor(background.backgroundColor);
  setVariable(node, "--cell-background", backgroundColor);
  setVariable(node, "--cell-radius", Number.isFinite(background.cornerRadius) ? `${background.cornerRadius}px` : null);
  const stroke = cssColor(background.strokeColor);
  setVariable(node, "--cell-stroke", stroke && background.strokeWidth > 0 ? `inset 0 0 0 ${Number(background.strokeWidth)}px ${stroke}` : null);
  node.dataset.style = typeof content.type === "string" ? content.type : "cell";
  // A plugin's content carries its text properties at the top (the emoji plugin: font largeTitle,
  // alignment center); the built-in styles carry them in textProperties.
  const plugin = node.dataset.style.startsWith("plugin:");
  const textProperties = content.textProperties || (plugin ? content : null);
  node.classList.toggle("centered", !!textProperties && textProperties.alignment === "center");
  const level = Number.isInteger(cell.indentationLevel) ? cell.indentationLevel : 0;
  node.style.setProperty("--indent", String(level));

  // The editing controls first at the leading edge, then the outline disclosure and leading custom views;
  // the rest at the trailing edge, in the registration's order.
  const controls = [];
  const leading = [];
  const trailing = [];
  for (const accessory of cell.accessories || []) {
    if (!accessory || typeof accessory !== "object") continue;
    if (accessory.displayed === "whenEditing" && !state.editing) continue;
    if (accessory.displayed === "whenNotEditing" && state.editing) continue;
    const part = accessoryNode(accessory, state);
    if (!part) continue;
    applyAccessoryOptions(part, accessory);
    if (!isLeading(accessory)) trailing.push(part);
    else (["delete", "insert", "multiselect"].includes(accessory.type) ? controls : leading).push(part);
  }
  node.append(...controls, ...leading);
  if (content.image !== undefined && content.image !== null && content.image !== "") {
    if (isImageURL(content.image)) {
      const image = element("img", "image");
      image.alt = "";
      image.referrerPolicy = "no-referrer";
      image.src = content.image;
      node.append(image);
    } else {
      node.append(element("span", "image symbol", content.image));
    }
  }
  const texts = element("span", "texts");
  if (content.prefersSideBySideTextAndSecondaryText || content.type === "valueCell") texts.classList.add("side-by-side");
  if (content.text !== undefined && content.text !== null) {
    const text = element("span", "text", content.text);
    applyTextProperties(text, textProperties);
    texts.append(text);
  }
  if (content.secondaryText !== undefined && content.secondaryText !== null && content.secondaryText !== "") {
    const secondary = element("span", "secondary", content.secondaryText);
    applyTextProperties(secondary, content.secondaryTextProperties);
    texts.append(secondary);
  }
  node.append(texts, ...trailing);
}

/** Draws a supplementary view (header, footer, badge); a badge whose text is empty is hidden. */
export function drawSupplementary(node, cell) {
  drawCell(node, cell);
  const text = cell.content && cell.content.text;
  node.hidden = node.classList.contains("badge") && (text === undefined || text === null || text === "");
}
