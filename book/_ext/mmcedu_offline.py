"""Sphinx extension: keep the built book free of references to content delivery networks.

Jupyter Book 1 always loads sphinx-thebe, which writes the address of its JavaScript bundle on
unpkg.com into every page, even with thebe (live code) turned off as it is here. This drops
that inline script, so the pages reference nothing outside the book.
"""


def _drop_thebe_cdn(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if scripts is None:
        return
    context["script_files"] = [
        js for js in scripts if "unpkg.com" not in str(getattr(js, "attributes", {}).get("body", ""))
    ]


def setup(app):
    app.connect("html-page-context", _drop_thebe_cdn, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
