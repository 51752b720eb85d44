// The record list's selection: "choose every record on this page", then, when the matches fill
// more than one page, "choose all N records that match" (the server acts on its own count of
// the filters, after asking to confirm); how many are chosen, and the actions once any is.
// Delegated from the document, since htmx swaps the table in and out.
"use strict";

(function () {
  function boxes() {
    return Array.from(document.querySelectorAll('input[type="checkbox"][name="records"]'));
  }

  function one(selector) {
    return document.querySelector(selector);
  }

  // The hidden input that asks for every match: sent only while enabled.
  function matchingChosen() {
    const scope = one("[data-matching-scope]");
    return Boolean(scope && !scope.disabled);
  }

  function chooseMatching(yes) {
    const scope = one("[data-matching-scope]");
    if (scope) {
      scope.disabled = !yes;
    }
  }

  function update() {
    const all = boxes();
    const chosen = all.filter((box) => box.checked).length;
    const wholePage = all.length > 0 && chosen === all.length;
    if (!wholePage) {
      chooseMatching(false);
    }
    const selectAll = one("[data-select-all]");
    if (selectAll) {
      selectAll.checked = wholePage;
      selectAll.indeterminate = chosen > 0 && chosen < all.length;
    }
    const offer = one("[data-select-matching]");
    const taken = one("[data-matching-chosen]");
    if (offer && taken) {
      offer.hidden = !wholePage || matchingChosen();
      taken.hidden = !matchingChosen();
    }
    // The actions show once there is something to act on (without JavaScript, always).
    const bar = one("#record-bulk");
    if (bar) {
      bar.hidden = chosen === 0 && !matchingChosen();
    }
    const count = one("[data-chosen-count]");
    if (count) {
      if (matchingChosen()) {
        count.textContent = `${taken.dataset.matchingCount} chosen`;
      } else {
        count.textContent = chosen ? `${chosen} chosen` : "";
      }
    }
  }

  function focusIn(container) {
    const button = container && container.querySelector("button");
    if (button) {
      button.focus();
    }
  }

  document.addEventListener("change", (event) => {
    const target = event.target;
    if (target.matches("[data-select-all]")) {
      boxes().forEach((box) => {
        box.checked = target.checked;
      });
    }
    if (target.matches("[data-select-all], input[name='records']")) {
      update();
    }
  });

  document.addEventListener("click", (event) => {
    const target = event.target;
    if (target.matches("[data-choose-matching]")) {
      chooseMatching(true);
      update();
      // The button clicked is hidden now: keep the keyboard's place on its counterpart.
      focusIn(one("[data-matching-chosen]"));
    } else if (target.matches("[data-clear-selection]")) {
      chooseMatching(false);
      boxes().forEach((box) => {
        box.checked = false;
      });
      update();
      const selectAll = one("[data-select-all]");
      if (selectAll) {
        selectAll.focus();
      }
    }
  });

  // A page restored from history may come back with boxes ticked.
  document.addEventListener("htmx:afterSettle", update);
  update();
})();
