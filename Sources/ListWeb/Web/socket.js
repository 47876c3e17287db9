// The page's line to listd: a WebSocket to listweb, which passes listd's protocol through (requests the
// page may make, replies and events back; PROTOCOL.md). A message from listweb holds one or more of
// listd's lines, separated by newlines. Requests are numbered and answered by their id; everything else
// is an event.
//
// The token: listweb prints its address with the token in the fragment (#token=…), which a browser never
// sends to any server. The page takes it from there into this origin's session storage (this scheme, host
// and port only: never another port of the host, as a cookie would be), takes it out of the address bar,
// and sends it as Authorization: Bearer with its requests and as ?token= in its WebSocket's address.

const TOKEN_KEY = "listweb-token";

/** listweb's token: from the address's fragment (then kept for this tab) or kept before. */
export function listwebToken() {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

/** GET `path` from listweb with the token; the response (a clear message when the token is missing). */
export async function fetchWithToken(path) {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${listwebToken()}` }, credentials: "omit" });
  if (response.status === 401) throw new Error("listweb needs its token: open the address listweb printed (it ends with #token=…)");
  return response;
}

/** A link to `path` on listweb that carries the token to a new tab (in the fragment, never sent). */
export function linkWithToken(path) {
  return `${path}#token=${encodeURIComponent(listwebToken())}`;
}

export class ListdSocket {
  /**
   * @param {string} url the WebSocket URL (ws://host/sources/NAME/socket)
   * @param {(event: object) => void} onEvent called for every event line
   * @param {(reason: string) => void} onClose called once when the socket is gone
   */
  constructor(url, onEvent, onClose) {
    this.nextID = 1;
    this.pending = new Map();
    this.onEvent = onEvent;
    this.onClose = onClose;
    this.closed = false;
    const address = new URL(url);
    address.searchParams.set("token", listwebToken());
    this.socket = new WebSocket(address.href);
    this.opened = new Promise((resolve, reject) => {
      this.socket.addEventListener("open", () => resolve());
      this.socket.addEventListener("error", () => reject(new Error("the WebSocket could not connect")));
    });
    this.socket.addEventListener("message", (message) => {
      for (const line of String(message.data).split("\n")) if (line) this.receive(line);
    });
    this.socket.addEventListener("close", (close) => this.close(close.reason || `closed (${close.code})`));
  }

  receive(text) {
    let line;
    try {
      line = JSON.parse(text);
    } catch {
      return;
    }
    if (line && typeof line === "object" && "event" in line) {
      this.onEvent(line);
      return;
    }
    const waiting = line && this.pending.get(line.id);
    if (!waiting) return;
    this.pending.delete(line.id);
    if (line.ok) {
      waiting.resolve(line.result);
    } else {
      const error = new Error((line.error && line.error.message) || "refused");
      error.code = line.error && line.error.code;
      waiting.reject(error);
    }
  }

  /** Sends `{cmd, ...members}` and resolves with its result (rejects with listd's error). */
  async request(cmd, members = {}) {
    await this.opened;
    if (this.closed) throw new Error("the connection is closed");
    const id = this.nextID++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, cmd, ...members }));
    });
  }

  close(reason) {
    if (this.closed) return;
    this.closed = true;
    for (const waiting of this.pending.values()) waiting.reject(new Error(reason));
    this.pending.clear();
    try {
      this.socket.close();
    } catch {
      // already closed
    }
    this.onClose(reason);
  }
}
