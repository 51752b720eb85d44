// The labelling page's keyboard. Every shortcut does what a control of the page does too, so the
// page works without this file; `?` opens the list of keys. Served as a file: the CSP allows no
// inline script.
"use strict";

(() => {
  const TYPING = "input[type=text], input[type=search], input[type=number], textarea, select";
  // Elements whose own Enter must keep its meaning.
  const INTERACTIVE = "a, button, input, label, select, summary, textarea";
  const VERDICTS = { 1: "safe", 2: "unsafe", 3: "unsure" };
  // After one of these keys, the next digit sets a score or ticks a risk type.
  const PREFIXES = {
    s: ["safety_score", "Safety score: press 0 to 3"],
    h: ["helpfulness_score", "Helpfulness score: press 0 to 3"],
    r: ["risk_types", "Risk type: press its number (0 for the tenth)"],
  };
  let pending = null;
  // Typed since the last draft the server confirmed: sent as the tab closes.
  let dirty = false;

  const labelForm = () => document.getElementById("label-form");
  const turns = () => Array.from(document.querySelectorAll(".turn[data-turn]"));

  function fields(name) {
    const form = labelForm();
    // form.elements includes the evidence boxes, which sit on the turns (form="label-form").
    return form ? Array.from(form.elements).filter((element) => element.name === name) : [];
  }

  // Tell htmx (which saves the draft) and the page, as a click would have.
  function announce(input) {
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function choose(name, value) {
    const input = fields(name).find((element) => element.value === value);
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

  function toggleEvidence(turn) {
    toggle(turn ? turn.querySelector(".evidence-toggle input") : null);
  }

  function showPending(text) {
    const hint = document.getElementById("key-pending");
    if (hint) {
      hint.textContent = text || "";
      hint.hidden = !text;
    }
  }

  function openDetails(id, focusSelector) {
    const details = document.getElementById(id);
    if (!details) return;
    details.open = focusSelector ? true : !details.open;
    const target = focusSelector ? details.querySelector(focusSelector) : null;
    (target || details.querySelector("summary")).focus({ preventScroll: true });
    // Focusing scrolls only as far as the summary, at the foot of the panel: what opened below
    // it stayed out of sight.
    if (details.open) details.scrollIntoView({ block: "nearest" });
  }

  function openCheatSheet() {
    const dialog = document.getElementById("cheat-sheet");
    if (dialog && !dialog.open) dialog.showModal();
  }

  function updateEvidenceSummary() {
    const summary = document.getElementById("evidence-summary");
    if (!summary) return;
    const marked = fields("evidence_turns")
      .filter((input) => input.checked)
      .map((input) => Number(input.value))
      .sort((a, b) => a - b);
    summary.textContent = marked.length
      ? "Marked: " + marked.map((n) => "#" + n).join(", ")
      : "None marked.";
  }

  function onPending(event, key) {
    const [name] = PREFIXES[pending];
    pending = null;
    showPending(null);
    if (!/^[0-9]$/.test(key)) return false;
    event.preventDefault();
    if (name === "risk_types") {
      toggle(fields(name)[key === "0" ? 9 : Number(key) - 1]);
    } else {
      choose(name, key);
    }
    return true;
  }

  function onTyping(event, form) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.form === form) {
      event.preventDefault();
      form.requestSubmit();
    } else if (event.key === "Escape") {
      event.target.blur();
      const details = event.target.closest("details");
      if (details && details.id === "skip") details.open = false;
      moveFocus(0);
    }
  }

  function onKeydown(event) {
    const form = labelForm();
    if (!form || event.defaultPrevented || event.altKey) return;
    if (document.querySelector("dialog[open]")) return;
    if (event.target.closest && event.target.closest(TYPING)) {
      onTyping(event, form);
      return;
    }
    if (event.ctrlKey || event.metaKey) return;
    const key = event.key;
    if (pending && onPending(event, key)) return;
    const actions = {
      "?": openCheatSheet,
      j: () => moveFocus(1),
      ArrowDown: () => moveFocus(1),
      k: () => moveFocus(-1),
      ArrowUp: () => moveFocus(-1),
      e: () => toggleEvidence(focusedTurn()),
      d: () => fields("risk_description")[0]?.focus(),
      x: () => openDetails("skip", "input[name=reason]"),
      g: () => openDetails("guidelines"),
      Enter: () => form.requestSubmit(),
    };
    if (VERDICTS[key]) {
      choose("verdict", VERDICTS[key]);
    } else if (PREFIXES[key] && fields(PREFIXES[key][0]).length) {
      pending = key;
      showPending(PREFIXES[key][1]);
    } else if (actions[key] && !(key === "Enter" && event.target.closest(INTERACTIVE))) {
      actions[key]();
    } else {
      return;
    }
    event.preventDefault();
  }

  // A click on a turn only makes it the current one (it takes the focus by itself): reading,
  // selecting text to copy or following a link is not marking it, which its box or `e` does.
  function onClick(event) {
    const opener = event.target.closest("[data-open-dialog]");
    if (opener) document.getElementById(opener.dataset.openDialog)?.showModal();
  }

  // A label or a skip sent back with an error: the first field to correct, beside its error.
  function fieldToCorrect() {
    const error = document.querySelector("#workspace .errorlist");
    return error?.parentElement.querySelector("input:not([type=hidden]), textarea, select");
  }

  function start() {
    document.querySelectorAll("[data-open-dialog]").forEach((button) => {
      button.hidden = false;
    });
    // The address names the record being labelled, so that it can be linked or reloaded. It
    // replaces the last one rather than adding to the history: an earlier record is no longer
    // the annotator's to open.
    const url = document.getElementById("workspace")?.dataset.url;
    if (url && url !== window.location.pathname) {
      window.history.replaceState(window.history.state, "", url);
    }
    const correct = fieldToCorrect();
    if (correct) {
      correct.focus();
      return;
    }
    // htmx announces new content a moment after showing it: keys pressed meanwhile may have
    // moved the focus to a field already, and it stays there.
    const active = document.activeElement;
    const first = turns()[0];
    if (first && labelForm() && (!active || active === document.body)) {
      first.focus({ preventScroll: true });
    }
  }

  document.addEventListener("keydown", onKeydown);
  document.addEventListener("click", onClick);
  document.addEventListener("input", (event) => {
    if (event.target.form && event.target.form === labelForm()) dirty = true;
  });
  document.addEventListener("change", (event) => {
    if (event.target.name === "evidence_turns") updateEvidenceSummary();
  });
  document.addEventListener("htmx:beforeSwap", (event) => {
    // An answer htmx does not swap in (a server error) leaves the record and the focus be.
    if (event.detail.shouldSwap && event.detail.target.id === "workspace") {
      // htmx gives the focus back to the element of the same id in the new content: the next
      // record's description after Ctrl+Enter, where every shortcut would type into its draft.
      document.activeElement?.blur();
      pending = null;
      dirty = false;
      showPending(null);
    }
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.detail.elt.id === "draft-status" && event.detail.successful) dirty = false;
    // A label or a skip that never arrived stays in the page, and the page says so.
    const failed = document.getElementById("send-failed");
    if (failed && event.detail.target && event.detail.target.id === "workspace") {
      failed.hidden = event.detail.successful === true;
    }
  });
  document.addEventListener("htmx:load", (event) => {
    if (event.detail.elt.id === "workspace") {
      window.scrollTo(0, 0);
      start();
    }
  });
  // A tab closed less than a draft's delay after typing still keeps what was typed.
  window.addEventListener("pagehide", () => {
    const form = labelForm();
    if (dirty && form && form.dataset.draftUrl) {
      navigator.sendBeacon(form.dataset.draftUrl, new FormData(form));
    }
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
