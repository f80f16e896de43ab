/* On a narrow screen the page contents ("On this page") and the chapter list open as drawers:
   <dialog> elements of pydata-sphinx-theme, which close only on Escape or a tap beside them. A tap
   on an entry that leads to a place on the same page (#anchor) closes its drawer too, so the
   reader sees the section it scrolls to. The link is followed as usual: closing the dialog
   during the click leaves the browser's own navigation to the anchor in place. */
(function () {
  function samePageAnchor(link) {
    const url = new URL(link.href, window.location.href);
    return url.hash !== ""
      && url.origin === window.location.origin
      && url.pathname === window.location.pathname
      && url.search === window.location.search;
  }

  function closeOnAnchorTap(event) {
    const dialog = event.currentTarget;
    const link = event.target.closest("a[href]");
    if (dialog.open && link && dialog.contains(link) && samePageAnchor(link)) {
      dialog.close();
    }
  }

  function start() {
    for (const id of ["pst-secondary-sidebar-modal", "pst-primary-sidebar-modal"]) {
      const dialog = document.getElementById(id);
      if (dialog) {
        dialog.addEventListener("click", closeOnAnchorTap);
      }
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
