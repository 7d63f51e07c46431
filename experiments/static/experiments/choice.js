// Four-option trials (seed 001): the keys answer the option positions left to right (D F J K or
// 1 2 3 4 → A B C D, fixed for every trial); the options come in the order the server chose (the
// item's circular mutant). The server sends `option_keys`: [{letter, code, label}, …] in position order.

export const LETTERS = Object.freeze(["A", "B", "C", "D"]);

// e.code → key name, and key name → option letter, in the shapes keyboard.js's responder takes.
export function optionKeyMaps(optionKeys) {
  if (!Array.isArray(optionKeys) || optionKeys.length !== LETTERS.length) {
    throw new Error("four-option trials need one key per option position");
  }
  const keys = {};
  const mapping = {};
  optionKeys.forEach(({ code, label }, position) => {
    const name = String(label).toLowerCase();
    keys[code] = name;
    mapping[name] = LETTERS[position];
  });
  return { keys: Object.freeze(keys), mapping: Object.freeze(mapping) };
}

export function isFourOption(trial) {
  return Array.isArray(trial.options) && trial.options.length === LETTERS.length;
}

// The options as list items, each with its key: <li data-letter="A"><kbd>D</kbd> <span>text</span></li>.
export function optionItems(doc, options, optionKeys) {
  return options.map((text, position) => {
    const li = doc.createElement("li");
    li.dataset.letter = LETTERS[position];
    const kbd = doc.createElement("kbd");
    kbd.textContent = optionKeys[position].label;
    const span = doc.createElement("span");
    span.textContent = text;
    li.append(kbd, " ", span);
    return li;
  });
}

// Practice feedback names the right option by its key and letter.
export function rightOptionText(answer, optionKeys) {
  const position = LETTERS.indexOf(answer);
  return position < 0 ? answer : `${optionKeys[position].label} (option ${answer})`;
}
