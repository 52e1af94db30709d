// Wordle's page: a board of tiles, an on-screen keyboard that remembers letters, and the
// server's own verdicts (an invalid word says why and costs no guess).
import { ServerError, Session, gameInfo, resetFromQuery, setText } from "./arena.js";

const ROWS = 6;
const LENGTH = 5;
const LAYOUT = ["qwertyuiop", "asdfghjkl", "+zxcvbnm-"]; // + Enter, - Backspace
const STATES = { G: "correct", Y: "present", X: "absent" };
const RANK = { absent: 1, present: 2, correct: 3 };

const $ = (id) => document.getElementById(id);
const session = new Session();
let info = null;
let firstGame = true;
let guesses = [];
let typed = "";
let done = true;
let busy = false;

function buildBoard() {
  const board = $("board");
  for (let r = 0; r < ROWS; r++) {
    const row = document.createElement("div");
    row.className = "row";
    row.setAttribute("role", "row");
    for (let c = 0; c < LENGTH; c++) {
      const tile = document.createElement("div");
      tile.className = "tile";
      tile.setAttribute("role", "gridcell");
      row.append(tile);
    }
    board.append(row);
  }
}

function buildKeyboard() {
  for (const line of LAYOUT) {
    const row = document.createElement("div");
    row.className = "keys";
    for (const char of line) {
      const key = document.createElement("button");
      key.type = "button";
      key.className = "key";
      key.tabIndex = -1; // the physical keyboard types; Tab moves between the real controls
      if (char === "+") {
        key.dataset.key = "Enter";
        key.classList.add("wide");
        setText(key, "Enter");
      } else if (char === "-") {
        key.dataset.key = "Backspace";
        key.classList.add("wide");
        key.setAttribute("aria-label", "Backspace");
        setText(key, "⌫");
      } else {
        key.dataset.key = char;
        setText(key, char);
      }
      key.addEventListener("click", () => press(key.dataset.key));
      row.append(key);
    }
    $("keyboard").append(row);
  }
}

function render() {
  const rows = $("board").children;
  for (let r = 0; r < ROWS; r++) {
    const tiles = rows[r].children;
    const guess = guesses[r];
    for (let c = 0; c < LENGTH; c++) {
      const tile = tiles[c];
      if (guess) {
        setText(tile, guess.word[c]);
        tile.dataset.state = STATES[guess.feedback[c]];
      } else if (r === guesses.length && !done && c < typed.length) {
        setText(tile, typed[c]);
        tile.dataset.state = "typed";
      } else {
        setText(tile, "");
        delete tile.dataset.state;
      }
      tile.setAttribute("aria-label", `${tile.textContent || "empty"} ${tile.dataset.state || ""}`.trim());
    }
  }
  const best = {};
  for (const guess of guesses) {
    [...guess.word].forEach((letter, i) => {
      const state = STATES[guess.feedback[i]];
      if (!best[letter] || RANK[state] > RANK[best[letter]]) best[letter] = state;
    });
  }
  for (const key of document.querySelectorAll(".key")) {
    if (best[key.dataset.key]) key.dataset.state = best[key.dataset.key];
    else delete key.dataset.state;
  }
}

function setStatus(text, kind = "") {
  $("status").className = `status ${kind}`;
  setText($("status"), text);
}

function shake() {
  const row = $("board").children[guesses.length];
  if (!row) return;
  row.classList.remove("shake");
  void row.offsetWidth; // restart the animation
  row.classList.add("shake");
}

function show(reply) {
  const observation = reply.observation;
  guesses = observation.guesses;
  done = reply.done;
  setText($("left"), `${observation.guesses_left} guess${observation.guesses_left === 1 ? "" : "es"} left`);
  if (observation.invalid_move) {
    setStatus(observation.reason || "Invalid guess.", "error");
    shake();
  } else {
    typed = "";
    setStatus("");
  }
  if (done) {
    const answer = (observation.answer || "").toUpperCase();
    const won = observation.reward_signals && observation.reward_signals.correct;
    if (won) {
      setStatus(`You won in ${guesses.length} guess${guesses.length === 1 ? "" : "es"}! The word was ${answer}.`, "won");
    } else if (!observation.invalid_move) {
      setStatus(`Out of guesses. The word was ${answer}.`);
    } else {
      setStatus(`${observation.reason || ""} The word was ${answer}.`, "error");
    }
    $("again").classList.remove("hidden");
    $("again").focus();
  }
  render();
}

async function submit() {
  if (typed.length < LENGTH) {
    setStatus("Not enough letters.", "error");
    shake();
    return;
  }
  busy = true;
  try {
    show(await session.step({ guess: typed }));
  } catch (error) {
    if (!(error instanceof ServerError)) throw error;
    setStatus(error.message, "error");
  } finally {
    busy = false;
  }
}

function press(key) {
  if (done || busy) return;
  if (key === "Enter") {
    submit();
  } else if (key === "Backspace") {
    typed = typed.slice(0, -1);
  } else if (/^[a-z]$/.test(key) && typed.length < LENGTH) {
    typed += key;
  }
  render();
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  const onControl = target instanceof HTMLButtonElement || target instanceof HTMLInputElement;
  if (onControl && (event.key === "Enter" || event.key === " ")) return; // the control acts
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  if (key === "Enter" || key === "Backspace" || /^[a-z]$/.test(key)) {
    event.preventDefault();
    press(key);
  }
}

async function newGame() {
  const data = resetFromQuery(info.reset);
  if (!firstGame) {
    delete data.word; // a link fixes its first game only
    delete data.seed;
  }
  if ($("hard").checked) data.hard_mode = true;
  else if (!firstGame) delete data.hard_mode;
  firstGame = false;
  $("again").classList.add("hidden");
  typed = "";
  try {
    const reply = await session.reset(data);
    $("hard").checked = Boolean(reply.observation.hard_mode);
    show(reply);
    setStatus("");
    document.activeElement && document.activeElement.blur();
  } catch (error) {
    setStatus(error.message, "error");
  }
}

async function main() {
  buildBoard();
  buildKeyboard();
  render();
  info = await gameInfo();
  document.addEventListener("keydown", onKey);
  $("again").addEventListener("click", newGame);
  $("new-game").addEventListener("click", newGame);
  await newGame();
}

main().catch((error) => setStatus(error.message, "error"));
