// Countdown's page: the numbers, the target, an expression box and the server's verdict (an
// answer that is not an expression of exactly the given numbers says why and uses no attempt).
import { ServerError, Session, gameInfo, resetFromQuery, setText } from "./arena.js";

const $ = (id) => document.getElementById(id);
const session = new Session();
let info = null;
let firstGame = true;
let done = true;

function setStatus(text, kind = "") {
  $("status").className = `status ${kind}`;
  setText($("status"), text);
}

function insert(text) {
  const box = $("expression");
  const start = box.selectionStart ?? box.value.length;
  const end = box.selectionEnd ?? box.value.length;
  box.value = box.value.slice(0, start) + text + box.value.slice(end);
  box.focus();
  box.setSelectionRange(start + text.length, start + text.length);
}

function showPuzzle(observation) {
  setText($("target"), observation.target);
  const numbers = $("numbers");
  numbers.replaceChildren();
  for (const number of observation.numbers) {
    const chip = document.createElement("button");
    chip.type = "button";
    chip.className = "number";
    chip.setAttribute("aria-label", `Insert ${number}`);
    setText(chip, number);
    chip.addEventListener("click", () => insert(String(number)));
    numbers.append(chip);
  }
}

function showVerdict(observation, reply) {
  const verdict = $("verdict");
  let kind;
  let title;
  if (observation.correct) {
    kind = "correct";
    title = "Correct!";
  } else if (observation.invalid_move) {
    kind = "invalid";
    title = "Not a valid answer: no attempt used";
  } else {
    kind = "wrong";
    title = "Wrong";
  }
  verdict.dataset.verdict = kind;
  verdict.classList.remove("hidden");
  setText($("verdict-title"), title);
  setText($("verdict-reason"), observation.feedback || observation.reason || "");
  if (reply.done && !observation.correct && observation.solution) {
    setText($("verdict-reason"), `${$("verdict-reason").textContent} One solution: ${observation.solution}`);
  }
}

function show(reply, isReset) {
  const observation = reply.observation;
  done = reply.done;
  const left = observation.attempts_left;
  setText($("left"), `${left} attempt${left === 1 ? "" : "s"} left`);
  if (isReset) {
    showPuzzle(observation);
    $("verdict").classList.add("hidden");
  } else {
    showVerdict(observation, reply);
  }
  $("expression").disabled = done;
  $("submit").disabled = done;
  $("again").classList.toggle("hidden", !done);
  if (done) {
    setStatus(observation.correct ? "Solved!" : "Game over.", observation.correct ? "won" : "");
    $("again").focus();
  } else {
    setStatus("");
    $("expression").focus();
  }
}

async function submit(event) {
  event.preventDefault();
  if (done) return;
  const expression = $("expression").value.trim();
  if (!expression) {
    setStatus("Type an expression first.", "error");
    return;
  }
  try {
    const reply = await session.step({ expression });
    if (!reply.observation.invalid_move && !reply.done) $("expression").select();
    show(reply, false);
  } catch (error) {
    if (!(error instanceof ServerError)) throw error;
    setStatus(error.message, "error");
  }
}

async function newGame() {
  const data = resetFromQuery(info.reset);
  if (!firstGame) {
    for (const name of ["seed", "numbers", "target"]) delete data[name]; // a link fixes its first puzzle
  }
  firstGame = false;
  $("expression").value = "";
  try {
    show(await session.reset(data), true);
  } catch (error) {
    setStatus(error.message, "error");
  }
}

async function main() {
  info = await gameInfo();
  $("answer").addEventListener("submit", submit);
  $("again").addEventListener("click", newGame);
  $("new-game").addEventListener("click", newGame);
  await newGame();
}

main().catch((error) => setStatus(error.message, "error"));
