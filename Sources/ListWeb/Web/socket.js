// The page's line to listd: a WebSocket to listweb, which passes listd's protocol through (requests the
// page may make, replies and events back; PROTOCOL.md). A message from listweb holds one or more of
// listd's lines, separated by newlines. Requests are numbered and answered by their id; everything else
// is an event.
//
// The token: listweb prints its address with the token in the fragment (#token=…), which a browser never
// sends to any server. The page takes it from there into this origin's session storage (this scheme, host
// and port only: never another port of the host, as a cookie would be), takes it out of the address bar,
// and sends it as Authorization: Bearer with its requests and as ?token= in its WebSocket's address, but
// only to a server that first proved it knows it (proveListweb): another program may hold this address
// while listweb is down, and an open page reconnects by itself.

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

const hex = (bytes) => [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");

/**
 * Resolves when the server on this page's address knows listweb's token: it answers a fresh nonce with
 * HMAC-SHA256 keyed with the token over "listweb-proof", its port and the nonce (TokenProof.swift), for
 * this page's own port. Rejects otherwise, and the token is not sent. (Outside a secure context there is
 * no WebCrypto to check with: plain HTTP to another host, where the token travels in the clear anyway.)
 */
export async function proveListweb(token = listwebToken()) {
  if (!globalThis.crypto || !crypto.subtle || !token) return;
  const nonce = hex(crypto.getRandomValues(new Uint8Array(16)));
  const refused = new Error("the server on this address did not prove it is listweb (another program may hold the port): the token stays here");
  let answer;
  try {
    const response = await fetch(`/api/proof?nonce=${nonce}`, { credentials: "omit", cache: "no-store" });
    answer = response.ok ? await response.json() : null;
  } catch {
    throw new Error("listweb cannot be reached");
  }
  const ownPort = Number(location.port || (location.protocol === "https:" ? 443 : 80));
  if (!answer || !Number.isInteger(answer.port) || typeof answer.proof !== "string" || !/^[0-9a-f]{64}$/.test(answer.proof)) throw refused;
  if (answer.port !== 0 && answer.port !== ownPort) throw refused;
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const proof = new Uint8Array(answer.proof.match(/../g).map((pair) => parseInt(pair, 16)));
  if (!(await crypto.subtle.verify("HMAC", key, proof, encoder.encode(`listweb-proof\n${answer.port}\n${nonce}`)))) throw refused;
}

/** GET `path` from listweb with the token, once it proved it is listweb; the response (a clear message when the token is missing). */
export async function fetchWithToken(path) {
  await proveListweb();
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
    this.socket = null;
    // The token goes with the WebSocket's address only once the server proved it is listweb.
    this.opened = proveListweb().then(
      () => this.connect(url),
      (error) => {
        this.close(error.message);
        throw error;
      });
    this.opened.catch(() => {}); // (a request waiting on it gets the error)
  }

  connect(url) {
    if (this.closed) throw new Error("the connection is closed");
    const address = new URL(url);
    address.searchParams.set("token", listwebToken());
    this.socket = new WebSocket(address.href);
    this.socket.addEventListener("message", (message) => {
      for (const line of String(message.data).split("\n")) if (line) this.receive(line);
    });
    this.socket.addEventListener("close", (close) => this.close(close.reason || `closed (${close.code})`));
    return new Promise((resolve, reject) => {
      this.socket.addEventListener("open", () => resolve());
      this.socket.addEventListener("error", () => reject(new Error("the WebSocket could not connect")));
    });
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
      if (this.socket) this.socket.close();
    } catch {
      // already closed
    }
    this.onClose(reason);
  }
}
