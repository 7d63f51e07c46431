// Phones and tablets: a coarse pointer and no fine pointer means there is (most likely) no keyboard.
export function lacksKeyboard(win) {
  if (typeof win.matchMedia !== "function") return false;
  return win.matchMedia("(pointer: coarse)").matches && !win.matchMedia("(any-pointer: fine)").matches;
}
