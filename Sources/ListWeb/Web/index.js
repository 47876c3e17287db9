// The index page: the data sources listweb's user may read (listd's listDataSources), as links. A name
// that could read as another (bidirectional controls, invisible characters, letters of another script that
// look alike) is shown with those characters escaped.

import { fetchWithToken, linkWithToken } from "./socket.js";
import { visibleName } from "./cells.js";

async function load() {
  const status = document.getElementById("status");
  const response = await fetchWithToken("/api/sources");
  if (!response.ok) {
    status.textContent = `listd: ${response.status} ${await response.text()}`;
    return;
  }
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
    first.append(link);
    row.append(first);
    for (const value of [source.version, source.sections, source.items, source.views, source.ownerName, source.access]) {
      const cell = document.createElement("td");
      cell.textContent = visibleName(String(value ?? ""));
      row.append(cell);
    }
    body.append(row);
  }
  status.textContent = `${dataSources.length} data source${dataSources.length === 1 ? "" : "s"}`;
}

load().catch((error) => { document.getElementById("status").textContent = error.message; });
