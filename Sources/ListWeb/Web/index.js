// The index page: the data sources listweb's user may read (listd's listDataSources), as links. A name
// that could read as another (bidirectional controls, invisible characters, letters of another script that
// look alike) is shown with those characters escaped.

import { fetchWithToken, linkWithToken } from "./socket.js";
import { visibleName } from "./cells.js";

const LABELS = [...document.querySelectorAll("#sources thead th")].map((th) => th.textContent);

/** The outage banner: listd (or listweb) did not answer; the table is greyed until a reload finds it back. */
function outage(reason) {
  const banner = document.getElementById("outage");
  banner.textContent = reason ? `listd is not answering (${reason}). The list may be out of date; reload to try again.` : "";
  banner.hidden = !reason;
  document.querySelector("main").classList.toggle("offline", !!reason);
}

async function load() {
  const status = document.getElementById("status");
  let response;
  try {
    response = await fetchWithToken("/api/sources");
  } catch (error) {
    outage(error.message);
    throw error;
  }
  if (!response.ok) {
    const reason = `${response.status} ${await response.text()}`;
    status.textContent = `listd: ${reason}`;
    if (response.status >= 500) outage(reason.trim());
    return;
  }
  outage(null);
  const { dataSources } = await response.json();
  const body = document.querySelector("#sources tbody");
  body.replaceChildren();
  for (const source of dataSources) {
    const row = document.createElement("tr");
    const link = document.createElement("a");
    link.href = linkWithToken(`/sources/${encodeURIComponent(source.name)}`);
    const shown = visibleName(source.name);
    link.textContent = shown;
    if (shown !== source.name) {
      link.classList.add("escaped");
      link.title = "characters that would change how the name reads are shown as \\u escapes";
    }
    const first = document.createElement("td");
    first.dataset.label = LABELS[0] || "";
    first.append(link);
    row.append(first);
    for (const [index, value] of [source.version, source.sections, source.items, source.views, source.ownerName, source.access].entries()) {
      const cell = document.createElement("td");
      // At phone widths each row reflows into "Label  value" lines (style.css): the label comes from here.
      cell.dataset.label = LABELS[index + 1] || "";
      cell.textContent = visibleName(String(value ?? ""));
      row.append(cell);
    }
    body.append(row);
  }
  status.textContent = `${dataSources.length} data source${dataSources.length === 1 ? "" : "s"}`;
}

load().catch((error) => { document.getElementById("status").textContent = error.message; });
