/* Display equations wider than the column scroll inside their own box (book.css); this marks
   them so the box shows a shadow on each side with more to show: "bai-scrolls" on an equation
   that overflows, "bai-scrolled" once it is scrolled from its start, "bai-at-end" at its end.
   Runs when MathJax has typeset the page and again when the window is resized. */
(function () {
  function update(el) {
    const overflow = el.scrollWidth - el.clientWidth;
    el.classList.toggle("bai-scrolls", overflow > 1);
    el.classList.toggle("bai-scrolled", el.scrollLeft > 1);
    el.classList.toggle("bai-at-end", overflow > 1 && el.scrollLeft >= overflow - 1);
  }

  function markAll() {
    document.querySelectorAll('mjx-container[display="true"]').forEach((el) => {
      update(el);
      if (!el.dataset.baiScrollWatched) {
        el.addEventListener("scroll", () => update(el), { passive: true });
        el.dataset.baiScrollWatched = "1";
      }
    });
  }

  function start() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(markAll);
    } else if (document.querySelector(".math")) {
      setTimeout(start, 100);
    }
  }

  window.addEventListener("resize", () => window.requestAnimationFrame(markAll));
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
