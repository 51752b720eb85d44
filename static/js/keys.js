// The keyboard of the pages where a record's turns are read and one form decides about it: the
// labelling page (annotate.js) and the adjudication page (adjudicate.js). Each page names its
// own keys; this file holds what they share: moving between turns, `?` for the list of keys,
// Enter to submit, Ctrl+Enter and Esc in a text box, and the first turn focused on arrival, so
// that the first key pressed is a shortcut. Served as a file: the CSP allows no inline script.
"use strict";

window.studioKeys = (() => {
  const TYPING = "input[type=text], input[type=search], input[type=number], textarea, select";
  // Elements whose own Enter must keep its meaning.
  const INTERACTIVE = "a, button, input, label, select, summary, textarea";

  const turns = () => Array.from(document.querySelectorAll(".turn[data-turn]"));

  function focusedTurn() {
    const active = document.activeElement;
    return active && active.closest ? active.closest(".turn[data-turn]") : null;
  }

  function moveFocus(step) {
    const all = turns();
    if (!all.length) return;
    const current = all.indexOf(focusedTurn());
    const index = current < 0 ? 0 : Math.max(0, Math.min(all.length - 1, current + step));
    all[index].focus({ preventScroll: true });
    all[index].scrollIntoView({ block: "nearest" });
  }

  // The form's fields of that name: form.elements includes those that sit outside it with
  // form="<its id>", such as the evidence boxes on the turns.
  function fields(form, name) {
    return form ? Array.from(form.elements).filter((element) => element.name === name) : [];
  }

  // Tell htmx and the page, as a click would have.
  function announce(input) {
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function choose(form, name, value) {
    const input = fields(form, name).find((element) => element.value === value);
    if (input) {
      input.checked = true;
      announce(input);
    }
  }

  function toggle(input) {
    if (input) {
      input.checked = !input.checked;
      announce(input);
    }
  }

  function openCheatSheet() {
    const dialog = document.getElementById("cheat-sheet");
    if (dialog && !dialog.open) dialog.showModal();
  }

  // The first turn, unless keys pressed before this ran moved the focus somewhere already.
  function focusFirstTurn() {
    const active = document.activeElement;
    const first = turns()[0];
    if (first && (!active || active === document.body)) first.focus({ preventScroll: true });
  }

  // Keys for the form `form()` returns (none while it returns nothing). `keys` maps a key to
  // its action, which returns false when it does not apply; `intercept(event, key)` sees every
  // key first and returns true for one it took; `onEscape(field)` runs as Esc leaves a field.
  function bind({ form, keys, intercept, onEscape }) {
    const actions = {
      "?": openCheatSheet,
      j: () => moveFocus(1),
      ArrowDown: () => moveFocus(1),
      k: () => moveFocus(-1),
      ArrowUp: () => moveFocus(-1),
      Enter: () => form().requestSubmit(),
      ...keys,
    };

    function onTyping(event, current) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        if (event.target.form !== current) return;
        event.preventDefault();
        current.requestSubmit();
      } else if (event.key === "Escape") {
        event.target.blur();
        if (onEscape) onEscape(event.target);
        moveFocus(0);
      }
    }

    document.addEventListener("keydown", (event) => {
      const current = form();
      if (!current || event.defaultPrevented || event.altKey) return;
      if (document.querySelector("dialog[open]")) return;
      if (event.target.closest && event.target.closest(TYPING)) {
        onTyping(event, current);
        return;
      }
      if (event.ctrlKey || event.metaKey) return;
      const key = event.key;
      if (intercept && intercept(event, key)) return;
      const action = actions[key];
      if (!action || (key === "Enter" && event.target.closest(INTERACTIVE))) return;
      if (action() === false) return;
      event.preventDefault();
    });
  }

  // Buttons that open a dialog, shown only where this file runs.
  function showDialogOpeners() {
    document.querySelectorAll("[data-open-dialog]").forEach((button) => {
      button.hidden = false;
    });
  }

  document.addEventListener("click", (event) => {
    const opener = event.target.closest("[data-open-dialog]");
    if (opener) document.getElementById(opener.dataset.openDialog)?.showModal();
  });

  return {
    bind,
    choose,
    fields,
    focusFirstTurn,
    focusedTurn,
    moveFocus,
    showDialogOpeners,
    toggle,
    turns,
  };
})();
