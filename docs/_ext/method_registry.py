"""``.. method-table::``: the MED solution methods as the solver registry describes them.

Each registered method (:data:`medmtl.med.solvers.METHODS`) is a row: its name, the first
paragraph of its class's docstring (for ``"auto"``, also the rule of
:func:`~medmtl.med.solvers.choose_method`), the inner solvers it takes (asked of the method
itself: its ``default_solver`` and whether its ``check_solver`` takes a CVXPY solver), and its
options. With the ``:options:`` flag each method's options follow the table, one line each as
``describe_options()`` gives them. Every page that lists the methods includes this directive,
so that a method registered, renamed or described anew changes every list at the next build.
"""

import inspect
import re

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from medmtl.med.solvers import METHODS, choose_method

# a probe for "takes any installed CVXPY solver": Clarabel is in medmtl's base install
_CVXPY_PROBE = "CLARABEL"


def _escaped(text):
    """``text`` with ``*`` and ``|`` outside its literals escaped (``|J|`` is not a
    substitution, ``10**5`` not emphasis)."""
    parts = re.split(r"(``.+?``)", text)
    return "".join(p if p.startswith("``") else re.sub(r"([*|])", r"\\\1", p) for p in parts)


def _paragraph(doc, index=0):
    """The ``index``-th paragraph of a docstring, on one line, its roles as literals."""
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(doc or "").split("\n\n") if p.strip()]
    text = paragraphs[index] if index < len(paragraphs) else ""
    return _escaped(re.sub(r":[\w:]+:`~?([^`]+)`", r"``\1``", text))


def summary(method):
    """The method's description: its class docstring's first paragraph, without the
    ``method="name"`` it opens with; ``"auto"`` adds the rule by which it chooses."""
    text = _paragraph(type(method).__doc__)
    text = re.sub(r'^``method="[^"]+"``\s*(\(the default\))?:?\s*', "", text)
    text = text[:1].upper() + text[1:]
    text = text.replace("(see the module notes)", f"(see ``{type(method).__module__}``)")
    if method.name == "auto":
        text += " " + _paragraph(choose_method.__doc__, 1)
    return text


def inner_solvers(method):
    """What ``solver=`` may be, asked of the method itself."""
    default = method.default_solver
    try:
        takes_cvxpy = method.check_solver(_CVXPY_PROBE) is not None
    except (ValueError, TypeError):
        takes_cvxpy = False
    if default is None:
        return "any installed CVXPY solver" if takes_cvxpy else "none"
    if takes_cvxpy:
        return f'``"{default}"`` (default) or any installed CVXPY solver'
    return f'``"{default}"`` only'


def rows():
    """``(name, description, inner solvers, option names)`` of every registered method,
    ``"auto"`` first, then by name."""
    names = sorted(METHODS, key=lambda name: (name != "auto", name))
    return [(name, summary(METHODS[name]), inner_solvers(METHODS[name]),
             ", ".join(f"``{opt.name}``" for opt in METHODS[name].options)) for name in names]


def table_rst(with_options=False):
    """The table (and, ``with_options``, each method's options) as reStructuredText."""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 10 50 20 20", "",
             "   * - ``method=``", "     - what it is", "     - ``solver=``", "     - options"]
    for name, text, solvers, options in rows():
        shown = f'``"{name}"``' + (" (default)" if name == "auto" else "")
        lines += [f"   * - {shown}", f"     - {text}", f"     - {solvers}", f"     - {options}"]
    if with_options:
        for name in sorted(METHODS, key=lambda name: (name != "auto", name)):
            lines += ["", f'**Options of** ``"{name}"``', ""]
            lines += [f"- ``{opt.name}`` (default ``{opt.default!r}``): {_paragraph(opt.doc)}"
                      for opt in METHODS[name].options]
    return "\n".join(lines)


class MethodTable(SphinxDirective):
    """The directive: the table of :func:`table_rst`, parsed as reStructuredText whatever the
    page's own markup (Markdown pages included), with docutils' core constructs only."""

    option_spec = {"options": directives.flag}

    def run(self):
        doctree = publish_doctree(table_rst("options" in self.options),
                                  settings_overrides={"report_level": 2, "halt_level": 2})
        container = nodes.container(classes=["method-table"])
        container.extend(child.deepcopy() for child in doctree.children)
        return [container]


def setup(app):
    app.add_directive("method-table", MethodTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
