// The page of a game without its own view: its text, as a transcript, and a form built from
// its action schema, with its declared tools as the instructions.
import { ServerError, Session, gameInfo, resetFromQuery, setText } from "./arena.js";

const $ = (id) => document.getElementById(id);
const session = new Session();
let info = null;
let fields = [];
let previous = {};

function typeOf(schema) {
  if (schema.type) return schema.type;
  const types = (schema.anyOf || []).map((s) => s.type).filter((t) => t && t !== "null");
  return types[0] || "string";
}

/** Action fields, those named like a tool's parameter first (the one a player usually fills). */
function actionFields() {
  const properties = (info.action && info.action.properties) || {};
  const toolParams = new Set(info.tools.flatMap((tool) => tool.parameters.map((p) => p.name)));
  const names = Object.keys(properties).filter((name) => name !== "metadata");
  names.sort((a, b) => Number(toolParams.has(b)) - Number(toolParams.has(a)));
  return names.map((name) => ({ name, schema: properties[name], type: typeOf(properties[name]) }));
}

function buildForm() {
  const box = $("fields");
  box.replaceChildren();
  fields = actionFields();
  for (const field of fields) {
    const wrap = document.createElement("div");
    wrap.className = "field";
    const label = document.createElement("label");
    label.htmlFor = `field-${field.name}`;
    setText(label, field.name);
    let input;
    if (field.type === "boolean") {
      input = document.createElement("input");
      input.type = "checkbox";
    } else {
      input = document.createElement("input");
      input.type = field.type === "integer" || field.type === "number" ? "number" : "text";
    }
    input.id = `field-${field.name}`;
    input.name = field.name;
    const help = document.createElement("small");
    setText(help, field.schema.description || "");
    wrap.append(label, input, help);
    box.append(wrap);
  }
}

function buildTools() {
  if (!info.tools.length && !info.instruction) return;
  $("tools-box").classList.remove("hidden");
  setText($("instruction"), info.instruction);
  for (const tool of info.tools) {
    const term = document.createElement("dt");
    const params = tool.parameters.map((p) => `${p.name}: ${p.type}`).join(", ");
    setText(term, `${tool.name}(${params})`);
    const doc = document.createElement("dd");
    setText(doc, tool.doc);
    $("tools").append(term, doc);
  }
}

/** What is new in this observation's text: the prompt when it changed, the new end of a
 * TextArena transcript, the feedback and the reason. */
function observationText(observation) {
  const parts = [];
  if (typeof observation.prompt === "string" && observation.prompt !== previous.prompt) {
    parts.push(observation.prompt);
  }
  const messages = Array.isArray(observation.messages) ? observation.messages : [];
  const last = messages.length ? messages[messages.length - 1].content : null;
  if (typeof last === "string") {
    const before = previous.transcript || "";
    parts.push(last.startsWith(before) ? last.slice(before.length).trim() : last);
  }
  for (const key of ["feedback", "reason"]) {
    const text = observation[key];
    if (typeof text === "string" && text && !parts.some((part) => part.includes(text))) {
      parts.push(text);
    }
  }
  previous = { prompt: observation.prompt, transcript: last };
  return parts.filter(Boolean).join("\n\n");
}

function addEntry(reply, move) {
  const { observation } = reply;
  const entry = document.createElement("article");
  entry.className = "entry" + (observation.invalid_move ? " invalid" : "");
  if (move) {
    const said = document.createElement("p");
    said.className = "meta";
    setText(said, `› ${JSON.stringify(move)}`);
    entry.append(said);
  }
  const text = document.createElement("pre");
  text.className = "text";
  setText(text, observationText(observation) || "(no text)");
  const meta = document.createElement("p");
  meta.className = "meta";
  const notes = [];
  if (observation.invalid_move) notes.push("invalid move: no turn used");
  if (reply.reward != null) notes.push(`reward ${reply.reward}`);
  if (reply.done) notes.push("game over");
  setText(meta, notes.join(" · "));
  const raw = document.createElement("details");
  const summary = document.createElement("summary");
  setText(summary, "observation");
  const json = document.createElement("pre");
  setText(json, JSON.stringify(observation, null, 2));
  raw.append(summary, json);
  entry.append(text, meta, raw);
  $("log").append(entry);
  entry.scrollIntoView({ block: "nearest" });
}

function setStatus(text, kind = "") {
  const status = $("status");
  status.className = `status ${kind}`;
  setText(status, text);
}

function readMove() {
  const move = {};
  for (const field of fields) {
    const input = document.getElementById(`field-${field.name}`);
    if (field.type === "boolean") {
      if (input.checked) move[field.name] = true;
    } else if (input.value.trim() !== "") {
      move[field.name] = input.type === "number" ? Number(input.value) : input.value;
    }
  }
  return move;
}

function setPlaying(playing) {
  for (const element of $("move").elements) element.disabled = !playing;
  if (playing && fields.length) document.getElementById(`field-${fields[0].name}`).focus();
  else if (!playing) $("new-game").focus();
}

async function newGame() {
  $("log").replaceChildren();
  previous = {};
  setStatus("Starting…");
  try {
    const reply = await session.reset(resetFromQuery(info.reset));
    addEntry(reply, null);
    setStatus(reply.done ? "Game over." : "Your move.");
    setPlaying(!reply.done);
  } catch (error) {
    setStatus(error.message, "error");
  }
}

async function send(event) {
  event.preventDefault();
  const move = readMove();
  if (!Object.keys(move).length) {
    setStatus("Fill in a field first.", "error");
    return;
  }
  try {
    const reply = await session.step(move);
    addEntry(reply, move);
    for (const field of fields) document.getElementById(`field-${field.name}`).value = "";
    const solved = reply.done && reply.reward > 0;
    setStatus(
      reply.done ? (solved ? `Game over: ${info.solved_word || "solved"}!` : "Game over.") : "Your move.",
      solved ? "won" : "",
    );
    setPlaying(!reply.done);
  } catch (error) {
    if (!(error instanceof ServerError)) throw error;
    setStatus(error.message, "error");
  }
}

async function main() {
  info = await gameInfo();
  document.title = `${info.name} · arenagym`;
  setText($("title"), info.name);
  setText($("description"), info.description);
  buildTools();
  buildForm();
  $("move").addEventListener("submit", send);
  $("new-game").addEventListener("click", newGame);
  await newGame();
}

main().catch((error) => setStatus(error.message, "error"));
