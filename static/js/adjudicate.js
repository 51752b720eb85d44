// The adjudication page's keyboard, on keys.js as the labelling page's: s / u for the final
// label, 0-3 for the settled score of scores far apart, r and d to write the reason and the risk
// description, Enter (Ctrl+Enter in a box) to settle and open the next open disagreement.
// Every key does what a control of the page does.
"use strict";

(() => {
  const keys = window.studioKeys;
  const settleForm = () => document.getElementById("settle-form");
  const focusField = (name) => () => keys.fields(settleForm(), name)[0]?.focus();
  const label = (value) => () => keys.choose(settleForm(), "label", value);
  // Digits settle the score of the first scale whose scores are far apart, when there is one.
  const score = (value) => () => {
    const scale = settleForm()?.querySelector("fieldset.score")?.dataset.scale;
    if (!scale) return false;
    keys.choose(settleForm(), scale, value);
    return true;
  };

  keys.bind({
    form: settleForm,
    keys: {
      s: label("safe"),
      u: label("unsafe"),
      r: focusField("reason"),
      d: focusField("risk_description"),
      0: score("0"),
      1: score("1"),
      2: score("2"),
      3: score("3"),
    },
  });

  function start() {
    keys.showDialogOpeners();
    // Sent back with an error: the first field to correct. Otherwise the first turn, so that
    // the next key pressed on the next record is a shortcut, not typed into its reason.
    const error = document.querySelector("#settle-form .errorlist");
    const correct = error?.parentElement.querySelector("input:not([type=hidden]), textarea");
    if (correct) {
      correct.focus();
    } else {
      keys.focusFirstTurn();
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
