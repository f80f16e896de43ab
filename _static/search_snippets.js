/* Search results quote the page's text around the match (Sphinx's searchtools.js). The pages
   hold their formulas as TeX for MathJax, so the snippets showed "\(L(\bH, \Delta) = \frac...".
   Before a snippet is cut, each formula is turned into plain text: delimiters dropped, Greek
   letters and common symbols as characters, \frac{a}{b} as (a)/(b), other commands and braces
   removed. Loaded on every page; it acts only where searchtools.js is. */
(function () {
  const SYMBOLS = {
    alpha: "α", beta: "β", gamma: "γ", delta: "δ", Delta: "Δ", varepsilon: "ε", epsilon: "ε",
    theta: "θ", lambda: "λ", mu: "μ", bmu: "μ", bnu: "ν", nu: "ν", xi: "ξ", pi: "π", sigma: "σ",
    tau: "τ", phi: "φ", varphi: "φ", omega: "ω", Omega: "Ω", bH: "H", le: "≤", leq: "≤",
    ge: "≥", geq: "≥", ne: "≠", neq: "≠", approx: "≈", sim: "∼", infty: "∞", sum: "Σ",
    prod: "Π", int: "∫", in: "∈", to: "→", cdot: "·", times: "×", pm: "±", mid: "|",
    ldots: "…", dots: "…", cdots: "…", log: "log", exp: "exp", min: "min", max: "max",
    inf: "inf", sup: "sup", otimes: "⊗", star: "*", ast: "*",
  };

  function texToText(tex) {
    let s = tex.replace(/^\s*(\\\(|\\\[|\$\$?)/, "").replace(/(\\\)|\\\]|\$\$?)\s*$/, "");
    for (let i = 0; i < 5; i++) {
      s = s.replace(/\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, "($1)/($2)");
    }
    s = s.replace(/\\([A-Za-z]+)/g, (m, name) => (name in SYMBOLS ? SYMBOLS[name] : ""));
    s = s.replace(/\\[,;:! ]/g, " ").replace(/\\\\/g, " ").replace(/[{}]/g, "");
    s = s.replace(/&/g, "").replace(/\s+/g, " ");
    return s.trim();
  }

  function patch() {
    // searchtools.js declares Search with const: a global binding, not a property of window
    if (typeof Search === "undefined" || typeof Search.htmlToText !== "function"
        || Search.baiLibPlainMath) {
      return;
    }
    const original = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll("span.math, div.math").forEach((el) => {
        el.replaceWith(doc.createTextNode(" " + texToText(el.textContent) + " "));
      });
      // formulas outside the math elements (section titles quoted in the page's contents)
      return original(doc.documentElement.outerHTML, anchor)
        .replace(/\\\((.+?)\\\)/gs, (m, tex) => texToText(tex))
        .replace(/\\\[(.+?)\\\]/gs, (m, tex) => texToText(tex));
    };
    Search.baiLibPlainMath = true;
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", patch);
  } else {
    patch();
  }
})();
