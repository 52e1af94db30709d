// Shared by every game's page: one WebSocket to the server's own /ws is one session, so each
// browser tab plays its own game. Every URL is relative to the page (…/web/), so the page
// works at a server's root and under any prefix a reverse proxy mounts it at.

/** The token this page was given (`?token=` in its URL, kept for the tab), or null. A server
 * that requires one reads it from the socket's query string. */
export function authToken() {
  const given = new URLSearchParams(location.search).get("token");
  if (given) sessionStorage.setItem("arenagym-token", given);
  return given || sessionStorage.getItem("arenagym-token");
}

/** The server's /ws, next to this page's folder, as ws:// or wss://. */
export function socketUrl(sessionId) {
  const url = new URL("../ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const token = authToken();
  if (token) url.searchParams.set("token", token);
  if (sessionId) url.searchParams.set("session_id", sessionId);
  return url.href;
}

/** What the page knows of its game: name, tools, reset and action schemas. */
export async function gameInfo() {
  const reply = await fetch("game.json");
  if (!reply.ok) throw new Error(`game.json: HTTP ${reply.status}`);
  return reply.json();
}

function fieldType(schema) {
  if (!schema) return "string";
  if (schema.type) return schema.type;
  const types = (schema.anyOf || []).map((s) => s.type).filter((t) => t && t !== "null");
  return types[0] || "string";
}

/** Reset fields from the page's own query string (`?seed=7`, `?word=crane`,
 * `?numbers=3,9,2&target=24`), typed by the reset schema; unknown names are left out. */
export function resetFromQuery(resetSchema) {
  const fields = (resetSchema && resetSchema.properties) || {};
  const data = {};
  for (const [name, raw] of new URLSearchParams(location.search)) {
    if (!(name in fields)) continue;
    const type = fieldType(fields[name]);
    if (type === "integer" || type === "number") data[name] = Number(raw);
    else if (type === "boolean") data[name] = ["1", "true", "yes", "on"].includes(raw.toLowerCase());
    else if (type === "array") data[name] = raw.split(",").map((v) => Number(v.trim()));
    else data[name] = raw;
  }
  return data;
}

export class ServerError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** One game session over one WebSocket. Requests are answered in order; a dropped socket is
 * re-opened on the next request and re-attached to the session (`?session_id=`). */
export class Session {
  constructor() {
    this.socket = null;
    this.sessionId = null;
    this.pending = [];
  }

  _open() {
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) return this.opened;
    const socket = new WebSocket(socketUrl(this.sessionId));
    this.socket = socket;
    this.opened = new Promise((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new ServerError("CONNECTION", "Cannot reach the game server."));
    });
    socket.onmessage = (event) => {
      const waiter = this.pending.shift();
      if (!waiter) return;
      const frame = JSON.parse(event.data);
      if (frame.type === "error") {
        waiter.reject(new ServerError(frame.data.code, frame.data.message));
      } else {
        waiter.resolve(frame.data);
      }
    };
    socket.onclose = (event) => {
      const why = event.reason ? ` (${event.reason})` : "";
      for (const waiter of this.pending.splice(0)) {
        waiter.reject(new ServerError("CONNECTION", `The connection to the server closed${why}.`));
      }
    };
    return this.opened;
  }

  async _send(message) {
    await this._open();
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.socket.send(JSON.stringify(message));
    });
  }

  /** A new episode; resolves to `{observation, reward, done}`. After a dropped socket it
   * starts a new session rather than re-attach to one that may have expired. */
  async reset(data = {}) {
    if (!this.socket || this.socket.readyState > WebSocket.OPEN) this.sessionId = null;
    const reply = await this._send({ type: "reset", data });
    if (reply.session_id) this.sessionId = reply.session_id;
    return reply;
  }

  /** One move; resolves to `{observation, reward, done}`, rejects with a ServerError. */
  step(action) {
    return this._send({ type: "step", data: action });
  }
}

/** Text into an element, never HTML. */
export function setText(element, text) {
  element.textContent = text == null ? "" : String(text);
}
