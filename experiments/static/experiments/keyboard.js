// F/J responses (or a trial's own keys): physical key positions (e.code), so every keyboard layout answers the same way.
// Other keys, modifier chords, held-down repeats, presses before onset and second presses are ignored.

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
      onResponse({ key: event.key, code: event.code, letter, answer: mapping[letter], timeStamp: event.timeStamp, onset });
      return true;
    },
  };
}

// A press that moves the page on (the start screen, going on after practice feedback): one of `keys`
// pressed afresh — not a held-down repeat, not a chord with Ctrl, Alt or Meta.
export function isStartKey(event, keys = KEYS) {
  return !event.repeat && !event.ctrlKey && !event.metaKey && !event.altKey && letterOf(event, keys) !== null;
}
