"""Sphinx extension: ``jupyter-book build . --builder singlehtml`` writes a usable one-page book.

Two things stand in the way in this book's setup, and this fixes both:

1. Sphinx looks up the visitors of custom nodes (a proof, an algorithm) under the builder's
   name. Once any extension registers a visitor for ``singlehtml``, the nodes registered for
   ``html`` only (sphinx-proof's) have none there, and the build stops with
   ``NotImplementedError: ... unknown node type: proof_node``. The missing ``html`` visitors
   are copied to the other html-format builders.
2. The root document lives in a folder (``book/intro``), so the single page is written to
   ``book/intro.html`` while its links to ``_static/`` and ``_images/`` are relative to the
   output folder: the page loads without styles, images or MathJax. The page is written to
   ``index.html`` as well, where those links resolve.
"""

import shutil
from pathlib import Path


def _share_html_visitors(app):
    if app.builder.format != "html" or app.builder.name == "html":
        return
    handlers = app.registry.translation_handlers
    own = handlers.setdefault(app.builder.name, {})
    for node_name, pair in handlers.get("html", {}).items():
        own.setdefault(node_name, pair)


def _single_page_at_the_root(app, exception):
    if exception is not None or app.builder.name != "singlehtml":
        return
    page = Path(app.outdir) / (app.config.root_doc + ".html")
    if page.parent != Path(app.outdir) and page.exists():
        shutil.copyfile(page, Path(app.outdir) / "index.html")


def setup(app):
    app.connect("builder-inited", _share_html_visitors)
    # Before sphinx-external-toc writes index.html as a redirect to the root document.
    app.connect("build-finished", _single_page_at_the_root, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
