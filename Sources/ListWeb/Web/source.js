// A data source's page: /sources/NAME. Starts the collection view (view.js) on listweb's WebSocket.

import { CollectionView } from "./view.js";
import { fetchWithToken } from "./socket.js";
import { setImageOrigins, visibleName } from "./cells.js";

const name = decodeURIComponent(location.pathname.replace(/^\/sources\//, ""));
// The name as it reads: bidirectional controls, invisible characters and lookalike letters escaped.
document.getElementById("title").textContent = visibleName(name);
document.title = `${visibleName(name)} · listweb`;

// Pinned headers stop under the bar, whatever height its font gives it.
const bar = document.querySelector(".bar");
new ResizeObserver(() => document.documentElement.style.setProperty("--bar-height", `${bar.offsetHeight}px`)).observe(bar);

let info;
try {
  info = await (await fetchWithToken("/api/info")).json();
} catch (error) {
  document.getElementById("status").textContent = error.message;
  throw error;
}
setImageOrigins(info.imageOrigins || []);
const scheme = location.protocol === "https:" ? "wss:" : "ws:";
const view = new CollectionView(document.getElementById("collection"), {
  dataSource: name,
  socketURL: `${scheme}//${location.host}/sources/${encodeURIComponent(name)}/socket`,
  actions: info.actions === true,
});
window.listweb = view;
view.start();
