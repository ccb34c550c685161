// Injected into a built page by tests/test_book.py: reports, as JSON in <body data-probe>, whether
// the exercise solutions start hidden and open on a click, whether MathJax typeset every formula,
// whether every figure has a numbered caption and every image loaded, and which resources the
// page fetched from anywhere but the test server.
(function () {
  const visible = (el) => !!el && getComputedStyle(el).visibility !== "hidden" && el.getBoundingClientRect().height > 0;
  function probe() {
    const out = {};
    const sols = [...document.querySelectorAll("div.solution.dropdown")];
    const body = (s) => s.querySelector("section") || s.children[1];
    out.solutions = sols.length;
    out.hidden_before = sols.filter((s) => !visible(body(s))).length;
    out.with_code = sols.filter((s) => s.querySelector("div.cell")).length;
    sols.forEach((s) => s.querySelector(".admonition-title").click());
    out.shown_after_click = sols.filter((s) => visible(body(s))).length;
    const maths = [...document.querySelectorAll("span.math, div.math")];
    out.math = maths.length;
    out.math_typeset = maths.filter((e) => e.querySelector("mjx-container")).length;
    const figs = [...document.querySelectorAll("article figure")];
    out.figures = figs.length;
    out.figures_captioned = figs.filter((f) => f.querySelector("figcaption .caption-number")).length;
    out.images_loaded = [...document.querySelectorAll("article img")].filter((i) => i.complete && i.naturalWidth > 0).length;
    out.images = document.querySelectorAll("article img").length;
    out.external = performance.getEntriesByType("resource").map((r) => r.name)
      .filter((u) => !u.startsWith(location.origin + "/") && !u.startsWith("data:"));
    out.resources = performance.getEntriesByType("resource").length;
    document.body.setAttribute("data-probe", JSON.stringify(out));
  }
  let done = false;
  const run = () => { if (!done) { done = true; probe(); } };
  window.addEventListener("load", () => {
    const ready = window.MathJax && MathJax.startup && MathJax.startup.promise;
    (ready ? MathJax.startup.promise : Promise.resolve()).then(() => setTimeout(run, 500));
    setTimeout(run, 20000);  // report even if MathJax never finishes (the math check then fails)
  });
})();
