// Shared by every game's page: one WebSocket to the server's own /ws is one session, so each
// browser tab plays its own game. Every URL is relative to the page (…/web/), so the page
// works at a server's root and under any prefix a reverse proxy mounts it at.

/** The server's /ws, next to this page's folder, as ws:// or wss://. A server that requires a
 * token reads it from the cookie `login()` set: never from the URL, which lands in logs. */
export function socketUrl(sessionId) {
  const url = new URL("../ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  if (sessionId) url.searchParams.set("session_id", sessionId);
  return url.href;
}

/** Post the token to the server, which keeps it in an HttpOnly cookie; true if accepted. */
async function login(token) {
  const reply = await fetch("login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token }),
  });
  return reply.ok;
}

/** Ask for the token in a dialog until the server accepts one. */
function askToken() {
  return new Promise((resolve) => {
    const dialog = document.createElement("dialog");
    dialog.id = "token-dialog";
    const form = document.createElement("form");
    const label = document.createElement("label");
    label.textContent = "This server needs a token to play.";
    const input = document.createElement("input");
    input.type = "password";
    input.name = "token";
    input.autocomplete = "current-password";
    input.placeholder = "Token";
    input.required = true;
    const note = document.createElement("p");
    note.className = "status";
    note.setAttribute("role", "status");
    const button = document.createElement("button");
    button.type = "submit";
    button.className = "primary";
    button.textContent = "Play";
    form.append(label, input, note, button);
    dialog.append(form);
    document.body.append(dialog);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      button.disabled = true;
      const accepted = await login(input.value.trim());
      button.disabled = false;
      if (!accepted) {
        note.textContent = "Wrong token.";
        input.select();
        return;
      }
      dialog.close();
      dialog.remove();
      resolve();
    });
    dialog.addEventListener("cancel", (event) => event.preventDefault());
    dialog.showModal();
    input.focus();
  });
}

/** Resolves once the page may use the server: at once where it needs no token or the
 * cookie holds a good one, else after the player typed one in. */
export async function ensureAccess() {
  const reply = await fetch("access");
  if (!reply.ok) throw new Error(`access: HTTP ${reply.status}`);
  if (!(await reply.json()).granted) await askToken();
}

/** What the page knows of its game: name, tools, reset and action schemas. Asks for the
 * server's token first, where it needs one. */
export async function gameInfo() {
  await ensureAccess();
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
