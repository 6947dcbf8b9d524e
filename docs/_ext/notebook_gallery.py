"""``.. notebook-gallery:: PATTERN``: a grid of cards, one per matching document (the executed
notebooks), each showing the document's title, its first figure and its first paragraph.

The cards are filled in once every document has been read and executed, from the documents'
own doctrees, so a figure is the one the build just drew.
"""

import re

from docutils import nodes
from sphinx.util import docname_join
from sphinx.util.docutils import SphinxDirective
from sphinx.util.matching import patfilter


class gallery_placeholder(nodes.General, nodes.Element):
    """Stands where the cards go until every document has been read."""


class NotebookGallery(SphinxDirective):
    required_arguments = 1  # a glob of document names, relative to this document

    def run(self):
        pattern = docname_join(self.env.docname, self.arguments[0])
        docnames = sorted(patfilter(self.env.found_docs, pattern))
        if not docnames:
            raise self.error(f"no document matches {self.arguments[0]!r}")
        for docname in docnames:  # rebuild the cards when a notebook changes
            self.env.note_dependency(self.env.doc2path(docname))
        return [gallery_placeholder(docnames=docnames)]


def _first(doctree, cls, condition=lambda node: True):
    return next((node for node in doctree.findall(cls) if condition(node)), None)


def _card(app, fromdocname, docname):
    doctree = app.env.get_doctree(docname)
    link = nodes.reference("", "", internal=True,
                           refuri=app.builder.get_relative_uri(fromdocname, docname))
    figure = _first(doctree, nodes.image)
    if figure is not None:
        figure = figure.deepcopy()
        figure["ids"], figure["classes"] = [], ["notebook-gallery-figure"]
        figure["alt"] = f"first figure of {app.env.titles[docname].astext()}"
        link += figure
    link += nodes.strong(text=app.env.titles[docname].astext())
    card = nodes.container(classes=["notebook-gallery-card"])
    card += nodes.paragraph("", "", link)
    section = _first(doctree, nodes.section)
    intro = section and _first(section, nodes.paragraph, lambda p: p.parent is section)
    if intro is not None:  # as text: its cross-references were resolved for its own page
        card += nodes.paragraph(text=_lead(intro.astext()))
    return card


def _lead(text, short=140, length=320):
    """The first sentences of ``text``: enough for ``short`` characters, cut at ``length``."""
    text, lead = " ".join(text.split()), ""
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text):  # not at "Fig. 2"
        if len(lead) >= short:
            break
        lead = f"{lead} {sentence}".strip()
    if len(lead) > length:
        lead = lead[:length].rsplit(" ", 1)[0]
    # a paragraph that leads into a list ends with a colon
    return lead if lead == text and not lead.endswith(":") else lead.rstrip(":") + " ..."


def _fill_galleries(app, doctree, fromdocname):
    for placeholder in list(doctree.findall(gallery_placeholder)):
        grid = nodes.container(classes=["notebook-gallery"])
        grid.extend(_card(app, fromdocname, docname) for docname in placeholder["docnames"])
        placeholder.replace_self(grid)


def setup(app):
    app.add_node(gallery_placeholder)
    app.add_directive("notebook-gallery", NotebookGallery)
    app.connect("doctree-resolved", _fill_galleries)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
