// Phones and tablets: a coarse pointer and no fine pointer means there is (most likely) no keyboard.
export function lacksKeyboard(win) {
  if (typeof win.matchMedia !== "function") return false;
  return win.matchMedia("(pointer: coarse)").matches && !win.matchMedia("(any-pointer: fine)").matches;
}

// The consent and instructions pages carry a form#no-keyboard: on a device without a keyboard it is sent
// (the server ends the session as returned and shows the page that asks for a keyboard, with the code).
export function screenOutWithoutKeyboard(win, doc) {
  const form = doc.getElementById("no-keyboard");
  if (!form || !lacksKeyboard(win)) return false;
  form.submit();
  return true;
}
