// A questionnaire page (templates/participant/questionnaire.html): each answer is sent as it is given
// (POST .../answer, JSON, with a fresh resend key), one at a time in order, retried while the network is
// down; the server refuses an answer it cannot take with a message, shown at the question. The page's
// Continue is an ordinary form POST carrying every answer, so the page works without this script and an
// answer still queued is sent with it. The server saves one answer per question (a re-send never doubles one).
import { csrfFromCookie } from "./sender.js";

// The value a question's inputs hold now: the checked radio's value, or the text of its input/textarea.
export function fieldValue(fieldset) {
  const checked = fieldset.querySelector("input[type=radio]:checked");
  if (checked) return checked.value;
  const text = fieldset.querySelector("input:not([type=radio]):not([type=hidden]), textarea");
  return text ? text.value : "";
}

export function newKey(random = globalThis.crypto) {
  const bytes = new Uint8Array(12);
  random.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// Sends answers one after the other; `post(body)` returns {status, body}; a network failure or a 5xx/429 is
// retried after `retryMs`, anything else is final and reported to `onResult(question, status, body)`.
export function createAnswerQueue({ post, onResult, wait = (ms) => new Promise((r) => setTimeout(r, ms)), retryMs = 2000 }) {
  const queue = [];
  let running = null;
  async function run() {
    while (queue.length) {
      const body = queue[0];
      let result;
      try { result = await post(body); } catch { result = null; }
      if (result === null || result.status >= 500 || result.status === 429) { await wait(retryMs); continue; }
      queue.shift();
      onResult(body.question, result.status, result.body);
    }
    running = null;
  }
  return {
    send(question, value) {
      // a later answer to the same question replaces one not sent yet
      const waiting = queue.findIndex((b, i) => (i > 0 || !running) && b.question === question);
      const body = { question, value, idempotency_key: newKey() };
      if (waiting >= 0) queue[waiting] = body; else queue.push(body);
      if (!running) running = run();
      return running;
    },
    pending: () => queue.length,
  };
}

function wire(document) {
  const form = document.getElementById("questionnaire");
  if (!form) return;
  const csrfToken = csrfFromCookie(document.cookie);
  const post = async (body) => {
    const response = await fetch(form.dataset.answerUrl, {
      method: "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken },
    });
    return { status: response.status, body: await response.json().catch(() => ({})) };
  };
  const queue = createAnswerQueue({
    post,
    onResult(question, status, body) {
      const fieldset = form.querySelector(`fieldset[data-question="${question}"]`);
      if (!fieldset) return;
      const message = fieldset.querySelector(".answer-error");
      const refused = status === 400;
      fieldset.classList.toggle("refused", refused);
      fieldset.dataset.saved = status < 300 ? "yes" : "no";
      if (message) { message.textContent = refused ? body.error || "This answer was not accepted." : ""; message.hidden = !refused; }
    },
  });
  for (const fieldset of form.querySelectorAll("fieldset[data-question]")) {
    fieldset.addEventListener("change", () => queue.send(Number(fieldset.dataset.question), fieldValue(fieldset)));
  }
  form.dataset.ready = "yes";  // answers are sent as given from now on (before: with the Continue only)
}

if (typeof document !== "undefined") wire(document);
