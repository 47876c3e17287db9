// A data source's page: /sources/NAME. Starts the collection view (view.js) on listweb's WebSocket.

import { CollectionView } from "./view.js";

const name = decodeURIComponent(location.pathname.replace(/^\/sources\//, ""));
document.getElementById("title").textContent = name;
document.title = `${name} · listweb`;

// Pinned headers stop under the bar, whatever height its font gives it.
const bar = document.querySelector(".bar");
new ResizeObserver(() => document.documentElement.style.setProperty("--bar-height", `${bar.offsetHeight}px`)).observe(bar);

const info = await (await fetch("/api/info", { credentials: "same-origin" })).json();
const scheme = location.protocol === "https:" ? "wss:" : "ws:";
const view = new CollectionView(document.getElementById("collection"), {
  dataSource: name,
  socketURL: `${scheme}//${location.host}/sources/${encodeURIComponent(name)}/socket`,
  actions: info.actions === true,
});
window.listweb = view;
view.start();
