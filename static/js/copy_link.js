// "Copy link" beside a link to pass on (an invitation's): copies it with the clipboard API and
// says "Copied". Where the browser refuses the clipboard (a page served over plain HTTP to
// another machine has none, or permission is denied), the link is selected instead, for the
// user to copy with their keyboard.
"use strict";

(function () {
  function say(button, text) {
    const status = button.parentElement.querySelector("[data-copy-status]");
    if (status) {
      status.textContent = text;
    }
  }

  function select(element) {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function copy(button) {
    const source = document.getElementById(button.dataset.copy);
    if (!source) {
      return;
    }
    const text = source.textContent.trim();
    function refused() {
      select(source);
      say(button, "Selected: press Ctrl+C (⌘C on a Mac) to copy it.");
    }
    if (!navigator.clipboard || !window.isSecureContext) {
      refused();
      return;
    }
    navigator.clipboard.writeText(text).then(function () {
      say(button, "Copied");
    }, refused);
  }

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      copy(button);
    });
  });
})();
