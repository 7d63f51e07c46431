// F/J responses (or a trial's own keys): physical key positions (e.code), so every keyboard layout answers the same way.
// Other keys, modifier chords, held-down repeats, presses before onset and second presses are ignored.
// Studies that offer on-screen buttons (issue 47) answer through the same responder (`choose`).

export const KEYS = Object.freeze({ KeyF: "f", KeyJ: "j" });

export function letterOf(event, keys = KEYS) {
  return keys[event.code] ?? null;
}

// `keys` (e.code → key name) defaults to F/J; four-option trials pass their own (see choice.js).
export function createResponder({ mapping, onResponse, keys = KEYS }) {
  let armed = false;
  let onset = 0;
  return {
    arm(at) { onset = at; armed = true; },
    disarm() { armed = false; },
    get armed() { return armed; },
    handle(event) {
      if (!armed || event.repeat || event.ctrlKey || event.metaKey || event.altKey) return false;
      const letter = letterOf(event, keys);
      if (letter === null || event.timeStamp <= onset) return false;
      armed = false;
      if (typeof event.preventDefault === "function") event.preventDefault();
      onResponse({ key: event.key, code: event.code, letter, answer: mapping[letter], timeStamp: event.timeStamp, onset,
        channel: "key" });
      return true;
    },
    // An on-screen answer button (a click or a tap; `channel` "click" or "touch") chose `letter`: it answers as
    // the key of its position would, sent with that key's code (the server maps it under the key mapping).
    choose(letter, timeStamp, channel) {
      const code = Object.keys(keys).find((c) => keys[c] === letter);
      if (!armed || code === undefined || timeStamp <= onset) return false;
      armed = false;
      onResponse({ key: letter, code, letter, answer: mapping[letter], timeStamp, onset, channel });
      return true;
    },
  };
}

// A press that moves the page on (the start screen, going on after practice feedback): one of `keys`
// pressed afresh — not a held-down repeat, not a chord with Ctrl, Alt or Meta.
export function isStartKey(event, keys = KEYS) {
  return !event.repeat && !event.ctrlKey && !event.metaKey && !event.altKey && letterOf(event, keys) !== null;
}
