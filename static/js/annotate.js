// The labelling page's keyboard. Every shortcut does what a control of the page does too, so the
// page works without this file; `?` opens the list of keys. What it shares with the adjudication
// page (turns, Enter, the list of keys) is keys.js's. Served as a file: the CSP allows no inline
// script.
"use strict";

(() => {
  const keys = window.studioKeys;
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
  const fields = (name) => keys.fields(labelForm(), name);

  function showPending(text) {
    const hint = document.getElementById("key-pending");
    if (hint) {
      hint.textContent = text || "";
      hint.hidden = !text;
    }
  }

  function startPending(key) {
    if (!fields(PREFIXES[key][0]).length) return false;
    pending = key;
    showPending(PREFIXES[key][1]);
    return true;
  }

  // The digit after a prefix key; any other key ends the prefix and does what it does.
  function onPending(event, key) {
    if (!pending) return false;
    const [name] = PREFIXES[pending];
    pending = null;
    showPending(null);
    if (!/^[0-9]$/.test(key)) return false;
    event.preventDefault();
    if (name === "risk_types") {
      keys.toggle(fields(name)[key === "0" ? 9 : Number(key) - 1]);
    } else {
      keys.choose(labelForm(), name, key);
    }
    return true;
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

  const verdictKeys = Object.fromEntries(
    Object.entries(VERDICTS).map(([key, verdict]) => [
      key,
      () => keys.choose(labelForm(), "verdict", verdict),
    ]),
  );
  keys.bind({
    form: labelForm,
    keys: {
      ...verdictKeys,
      s: () => startPending("s"),
      h: () => startPending("h"),
      r: () => startPending("r"),
      // A click on a turn only makes it the current one (it takes the focus by itself): reading,
      // selecting text to copy or following a link is not marking it, which its box or `e` does.
      e: () => keys.toggle(keys.focusedTurn()?.querySelector(".evidence-toggle input")),
      d: () => fields("risk_description")[0]?.focus(),
      x: () => openDetails("skip", "input[name=reason]"),
      g: () => openDetails("guidelines"),
    },
    intercept: onPending,
    onEscape: (field) => {
      const details = field.closest("details");
      if (details && details.id === "skip") details.open = false;
    },
  });

  // A label or a skip sent back with an error: the first field to correct, beside its error.
  function fieldToCorrect() {
    const error = document.querySelector("#workspace .errorlist");
    return error?.parentElement.querySelector("input:not([type=hidden]), textarea, select");
  }

  function start() {
    keys.showDialogOpeners();
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
    } else if (labelForm()) {
      // htmx announces new content a moment after showing it: keys pressed meanwhile may have
      // moved the focus to a field already, and it stays there.
      keys.focusFirstTurn();
    }
  }

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
