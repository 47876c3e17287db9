// The index page: the data sources listweb's user may read (listd's listDataSources), as links.

async function load() {
  const status = document.getElementById("status");
  const response = await fetch("/api/sources", { credentials: "same-origin" });
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
    link.href = `/sources/${encodeURIComponent(source.name)}`;
    link.textContent = source.name;
    const first = document.createElement("td");
    first.append(link);
    row.append(first);
    for (const value of [source.version, source.sections, source.items, source.views, source.ownerName, source.access]) {
      const cell = document.createElement("td");
      cell.textContent = String(value ?? "");
      row.append(cell);
    }
    body.append(row);
  }
  status.textContent = `${dataSources.length} data source${dataSources.length === 1 ? "" : "s"}`;
}

load().catch((error) => { document.getElementById("status").textContent = error.message; });
