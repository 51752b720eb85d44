// The new-project page: the slug follows the name as it is typed, as the server would make it
// (Django's slugify), until the user edits the slug; emptied, it follows the name again. The
// hidden slug_from_name tells the server the slug was made here, so that it adds -2, -3 ...
// when another project has it, rather than refusing it.
"use strict";

(function () {
  const name = document.getElementById("id_name");
  const slug = document.getElementById("id_slug");
  const fromName = document.getElementById("id_slug_from_name");
  if (!name || !slug || !fromName) {
    return;
  }

  // django.utils.text.slugify: accents dropped, what is not a word character, a space or a
  // hyphen removed, runs of spaces and hyphens made one hyphen.
  function slugify(text) {
    const ascii = text.normalize("NFKD").replace(/[^\x00-\x7F]/g, "");
    const words = ascii.toLowerCase().replace(/[^\w\s-]/g, "");
    return words.replace(/[-\s]+/g, "-").replace(/^[-_]+|[-_]+$/g, "");
  }

  function follow(yes) {
    fromName.value = yes ? "True" : "";
  }

  function fill() {
    if (fromName.value) {
      const limit = slug.maxLength > 0 ? slug.maxLength : 80;
      slug.value = slugify(name.value).slice(0, limit).replace(/-+$/, "");
    }
  }

  follow(fromName.value === "True" || slug.value === "");
  fill();
  name.addEventListener("input", fill);
  slug.addEventListener("input", function () {
    follow(slug.value === "");
    fill();
  });
})();
