// The record list's selection: "choose every record on this page", and how many are chosen.
// Delegated from the document, since htmx swaps the table in and out.
"use strict";

(function () {
  function boxes() {
    return Array.from(document.querySelectorAll('input[type="checkbox"][name="records"]'));
  }

  function update() {
    const all = boxes();
    const chosen = all.filter((box) => box.checked).length;
    const selectAll = document.querySelector("[data-select-all]");
    if (selectAll) {
      selectAll.checked = all.length > 0 && chosen === all.length;
      selectAll.indeterminate = chosen > 0 && chosen < all.length;
    }
    const count = document.querySelector("[data-chosen-count]");
    if (count) {
      count.textContent = chosen ? `${chosen} chosen` : "";
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
})();
