// The trial page: runs the list the server decided (practice with feedback, or the real trials),
// sends every answer as it is given, and completes only once the server holds every answer.
// Each phase opens on a start screen (#intro) left by a key press, so the first question never
// follows a mouse click; a progress line says where the participant is ("12 of 26").
import { afterPaint, toEpoch } from "./timing.js";
import { createResponder, isStartKey } from "./keyboard.js";
import { progressText } from "./progress.js";
import { createSender, csrfFromCookie, newKey } from "./sender.js";
import { isFourOption, optionItems, optionKeyMaps, rightOptionText } from "./choice.js";
import { channelOf, deviceKind } from "./device.js";

const config = JSON.parse(document.getElementById("runner-config").textContent);
const fourOption = config.option_keys ? optionKeyMaps(config.option_keys) : null;
const four = (trial) => fourOption !== null && isFourOption(trial);  // a four-option trial (seed 001)
const $ = (id) => document.getElementById(id);
const csrfToken = csrfFromCookie(document.cookie);
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const show = (id, visible) => { $(id).hidden = !visible; };
// The stage's data-state (blank, shown, armed, saving, done) and data-index let people and tests see where it is.
const stage = (state, index) => { $("stage").dataset.state = state; if (index !== undefined) $("stage").dataset.index = index; };
const startKeys = fourOption ? fourOption.keys : undefined;  // F/J, or the four option keys
// Studies whose answer input offers buttons (issue 47): #reminder's buttons answer a yes/no trial as their keys
// do, clicked or tapped; the start and go-on screens have a .go button. The device is judged once (device.js).
const device = deviceKind(window);
let lastPointerType = "";
document.addEventListener("pointerdown", (event) => { lastPointerType = event.pointerType; }, true);

// Resolves on the next start press (keyboard.js: isStartKey) made after this call, or a click or tap on a
// .go button where the study offers buttons.
function pressToGo() {
  const since = performance.now();
  return new Promise((resolve) => {
    const buttons = config.buttons ? [...document.querySelectorAll("button.go")] : [];
    const done = () => {
      document.removeEventListener("keydown", onKey);
      buttons.forEach((button) => button.removeEventListener("click", onClick));
      resolve();
    };
    const onKey = (event) => {
      if (!isStartKey(event, startKeys) || event.timeStamp < since) return;
      event.preventDefault();
      done();
    };
    const onClick = (event) => { if (channelOf(event, lastPointerType) !== null && event.timeStamp >= since) done(); };
    document.addEventListener("keydown", onKey);
    buttons.forEach((button) => button.addEventListener("click", onClick));
  });
}

async function startScreen() {
  show("intro", true);
  stage("intro");
  await pressToGo();
  show("intro", false);
  stage("blank");
}

function progress(position) {
  $("progress").textContent = progressText({ phase: config.phase, position, total: config.trials.length });
  show("progress", true);
}

let trialFlags = { focus_lost: false, visibility_lost: false };
window.addEventListener("blur", () => { trialFlags.focus_lost = true; });
document.addEventListener("visibilitychange", () => { if (document.hidden) trialFlags.visibility_lost = true; });

function problem(message) { $("problem").textContent = message; show("problem", true); }

async function post(url, body) {
  return fetch(url, {
    method: "POST", credentials: "same-origin", body: body === undefined ? "" : JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken },
  });
}

function present(trial) {
  const premises = $("premises");
  premises.replaceChildren(...trial.premises.map((text) => {
    const p = document.createElement("p"); p.textContent = text; return p;
  }));
  $("question").textContent = trial.question;
  const options = four(trial);
  if ($("options")) {
    $("options").replaceChildren(...(options ? optionItems(document, trial.options, config.option_keys) : []));
    show("options", options);
    show("option-reminder", options);
  }
  show("reminder", !options);
  show("feedback", false);
  show("stimulus", true);
}

// One trial: show it, take the onset after paint, wait for F/J (or the time limit). With keepShown
// the question stays on screen after the answer (practice feedback is given under it).
function runTrial(trial, { keepShown = false } = {}) {
  return new Promise((resolve) => {
    trialFlags = { focus_lost: !document.hasFocus(), visibility_lost: document.hidden };
    let timeout = null;
    const keys = four(trial) ? fourOption : { mapping: config.mapping, keys: undefined };
    const responder = createResponder({
      mapping: keys.mapping, keys: keys.keys,
      onResponse: (response) => { finish({ ...response, timed_out: false }); },
    });
    const onKey = (event) => responder.handle(event);
    const answerButtons = config.buttons && !four(trial) ? [...document.querySelectorAll("#reminder button.answer")] : [];
    const onClick = (event) => {
      const channel = channelOf(event, lastPointerType);
      if (channel !== null) responder.choose(event.currentTarget.dataset.letter, event.timeStamp, channel);
    };
    function finish(response) {
      responder.disarm();
      if (timeout !== null) clearTimeout(timeout);
      document.removeEventListener("keydown", onKey);
      answerButtons.forEach((button) => button.removeEventListener("click", onClick));
      if (!keepShown) show("stimulus", false);
      stage(keepShown ? "answered" : "blank");
      resolve({ ...response, flags: { ...trialFlags } });
    }
    document.addEventListener("keydown", onKey);
    answerButtons.forEach((button) => button.addEventListener("click", onClick));
    present(trial);
    stage("shown", trial.index);
    afterPaint().then((onset) => {
      responder.arm(onset);
      stage("armed");
      if (config.time_limit_ms) {
        timeout = setTimeout(() => finish({
          key: "", code: "", letter: null, answer: null, onset, timeStamp: performance.now(), timed_out: true,
        }), config.time_limit_ms);
      }
    });
  });
}

// Practice: each answer gets feedback under the question, which stays on screen until a key press.
async function runPractice() {
  await startScreen();
  for (const [position, trial] of config.trials.entries()) {
    await wait(config.blank_ms);
    progress(position + 1);
    const response = await runTrial(trial, { keepShown: true });
    const right = response.answer === trial.answer;
    $("feedback").textContent = response.timed_out ? "Too slow — try to answer within the time limit."
      : right ? "Correct." : `Not quite: the answer is ${four(trial) ? rightOptionText(trial.answer, config.option_keys)
        : trial.answer === "yes" ? "Yes" : "No"}.`;
    show("feedback", true);
    show("go-on", true);
    stage("feedback");
    await pressToGo();
    show("feedback", false);
    show("go-on", false);
    show("stimulus", false);
    stage("blank");
  }
  await post(config.urls.practice);
  window.location.assign(config.urls.session);  // the server says which step comes next
}

// The key reminders belong to the questions: the saving and completion screens carry none.
function hideReminders() {
  show("reminder", false);
  if ($("option-reminder")) show("option-reminder", false);
}

function end(body) {
  show("stimulus", false);
  show("progress", false);
  hideReminders();
  stage("done");
  if (body.status === "completed") {
    $("done-text").textContent = config.preview ? `Preview complete: nothing was recorded as data. ${config.end_text}`
      : `All your answers are saved. ${config.end_text}`;
  } else {
    $("done-text").textContent = "The study has ended.";
  }
  if (body.code) { $("code").textContent = body.code; show("code-line", true); }
  show("done", true);
  // a debrief is read on the end page (the session page), which then links to Prolific
  const debrief = config.debrief && (body.status === "completed" || body.status === "failed_attention");
  if (debrief) setTimeout(() => window.location.assign(config.urls.session), 1500);
  else if (body.redirect) setTimeout(() => window.location.assign(body.redirect), 1500);
  else if (body.status !== "completed") setTimeout(() => window.location.assign(config.urls.session), 1500);
}

async function complete(sender) {
  hideReminders();
  show("done", true);
  stage("saving");
  await sender.drained();
  for (;;) {
    let response;
    try { response = await post(config.urls.finish); } catch { await wait(2000); continue; }
    const body = await response.json().catch(() => ({}));
    // still in progress: questionnaires follow the items (the session page shows them)
    if (response.ok && body.status === "started") return window.location.assign(config.urls.session);
    if (response.ok) return end(body);
    if (response.status >= 500 || response.status === 429) { await wait(2000); continue; }  // 429: rate limited
    if (body.reason === "ended") return window.location.assign(config.urls.session);
    return problem(`Your answers could not all be saved: ${body.error || response.status}. Please contact the researcher.`);
  }
}

async function runMain() {
  let ended = false;
  const sender = createSender({
    url: config.urls.trial, csrfToken, storage: window.localStorage, storageKey: `${config.storage_key}:queue`,
    onStatus: (status) => {
      show("connection", status === "offline");
      show("reload", status === "reload");
    },
    onSaved: (payload, body) => { if (body.status && body.status !== "started" && !ended) { ended = true; end(body); } },
    onRejected: (payload, status, body) => {
      if (body.reason === "ended") { ended = true; window.location.assign(config.urls.session); return; }
      if (body.reason !== "answered") problem(`An answer was refused by the server: ${body.error || status}`);
    },
  });
  window.addEventListener("online", () => sender.retryNow());
  setInterval(() => { post(config.urls.heartbeat).catch(() => {}); }, 30000);
  sender.flush();  // answers a previous visit could not send
  const done = new Set([...config.answered, ...sender.pending()]);
  if (config.trials.some((trial) => !done.has(trial.index))) await startScreen();
  for (const trial of config.trials) {
    if (done.has(trial.index)) continue;
    await wait(config.blank_ms);
    if (ended) return;
    progress(trial.index + 1);
    const r = await runTrial(trial);
    sender.enqueue({
      index: trial.index, item: trial.item, key: r.key, code: r.code, timed_out: r.timed_out,
      idempotency_key: newKey(), onset_ms: toEpoch(r.onset), response_ms: toEpoch(r.timeStamp),
      viewport_width: window.innerWidth, viewport_height: window.innerHeight, ...r.flags,
      channel: r.timed_out ? "" : r.channel, device,
    });
  }
  if (!ended) await complete(sender);
}

(config.phase === "practice" ? runPractice() : runMain()).catch((error) => problem(`Something went wrong: ${error}`));
