// The browsable API's page, after DRF's own scripts. DRF's base.html opens <html> outside
// any template block, so its language is set here; its main region holds a second one,
// which is made a plain box; and Bootstrap's tooltip takes the format menu button's title
// (its only name) away, so it gets a name of its own. The language and the name come from
// the page (data attributes of this script's element, articles/api/browsable_api.html).
"use strict";
var given = (document.currentScript && document.currentScript.dataset) || {};
if (!document.documentElement.lang) document.documentElement.lang = given.lang || "en";
document.querySelectorAll("[role=main] [role=main]").forEach((inner) => inner.removeAttribute("role"));
document.querySelectorAll(".format-selection .dropdown-toggle").forEach((button) => {
  button.setAttribute("aria-label", given.formatLabel || "Choose the format of the GET request");
});
