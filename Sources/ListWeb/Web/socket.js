// The page's line to listd: a WebSocket to listweb, which passes listd's protocol through (requests the
// page may make, replies and events back; PROTOCOL.md). A message from listweb holds one or more of
// listd's lines, separated by newlines. Requests are numbered and answered by their id; everything else
// is an event.

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
    this.socket = new WebSocket(url);
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
