// Task pages: when a form comes back refused, the focus goes to what went wrong.
//
// A refused form reloads the page with the focus at its top, far from the field in error on a
// long task or review form; a keyboard or screen-reader user would have to hunt for it. The
// first invalid field takes the focus (its error is read with it, through aria-describedby);
// failing that, the form's or the page's error message does.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const main = document.getElementById("main");
  if (!main) {
    return;
  }
  const field = main.querySelector("[aria-invalid='true']");
  if (field) {
    field.focus();
    return;
  }
  const message = main.querySelector(".errorlist[role='alert'], .import-report .error")
    || document.querySelector(".messages .message.error");
  if (message) {
    // Messages are not focusable by nature; -1 lets a script focus them without adding a tab stop.
    message.setAttribute("tabindex", "-1");
    message.focus();
  }
});
