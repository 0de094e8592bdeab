"""Text from outside (the backend, a task app, a config) made inert where it lands: HTML or Markdown.

Jupyter does not sanitize outputs made in the running session, so a status ``error`` of
``<img src=x onerror=...>`` put into a ``text/markdown`` or ``text/html`` output verbatim is script in the
user's page. Every string that did not come from synth-nb itself goes through one of these on its way
into markup, chosen by where it lands:

* ``html_text``: HTML text or a quoted attribute value (``&``, ``<``, ``>``, both quotes escaped);
* ``md_text``: Markdown inline text (a table cell, a sentence): HTML and every character Markdown gives a
  meaning to (links and images ``[…](…)``, emphasis, code spans, tables, math ``$``) backslash-escaped, line
  breaks made spaces, so it reads as typed and can never open a link, an image or a raw HTML element;
* ``md_code``: a Markdown code span (ids, model names), its backtick fence longer than any run inside;
* ``md_block``: a fenced code block (prompt text), its fence longer than any backtick run inside.

Jupyter also typesets ``$…$`` and ``\\(…\\)`` found in an output's text with MathJax, after Markdown and
HTML are rendered; an output holding backend text is wrapped in ``no_math_html`` / ``no_math_markdown``
(MathJax's ``mathjax_ignore`` class) so that text is shown as sent, not as math.
"""

from __future__ import annotations

import html
import re

__all__ = ["NO_MATH", "html_text", "md_block", "md_code", "md_text", "no_math_html", "no_math_markdown"]

#: the class MathJax (Jupyter's typesetter) leaves alone, with everything inside it
NO_MATH = "mathjax_ignore"

#: the characters with a meaning anywhere in Markdown inline text (CommonMark lets any ASCII punctuation be
#: escaped): links and images (``[``; ``(`` and ``!`` mean nothing without it), emphasis, code spans, raw HTML
#: and entities (``<``, ``&``), table cells (``|``), strike-through, math in Jupyter (``$``); ``_`` only at a
#: word's edge (inside a word, as in ``prompt_learning``, it is no emphasis)
_MD_SPECIAL = re.compile(r"([\\`*\[\]<|~$&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
#: what has a meaning only at the start of a line (a heading, a list item, a quote, a setext underline)
_MD_LINE_START = re.compile(r"^(\s*)([-+=#>]|\d{1,9}[.)](?=\s|$))")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
_BACKTICKS = re.compile(r"`+")


def html_text(value: object) -> str:
    """``value`` as HTML text, safe inside an element or a quoted attribute."""
    return html.escape(str(value), quote=True)


def md_text(value: object) -> str:
    """``value`` as Markdown inline text on one line: shown literally, never markup."""
    # edge whitespace means nothing in Markdown text but could open an indented code block or a hard break
    text = _MD_SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(value)).strip())
    return _MD_LINE_START.sub(lambda m: f"{m.group(1)}{m.group(2)[:-1]}\\{m.group(2)[-1]}", text)


def _fence(text: str, minimum: int) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(minimum, longest + 1)


def md_code(value: object, *, cell: bool = False) -> str:
    """``value`` as a Markdown code span on one line. ``cell``: it sits in a table row, where a ``|`` would end
    the cell even inside a code span (GitHub-flavoured tables), so it is written ``\\|``."""
    text = _LINE_BREAKS.sub(" ", str(value))
    if cell:
        text = text.replace("|", "\\|")
    if not text.strip(" "):
        return f"`{text or ' '}`"  # all spaces: CommonMark keeps them (an empty span would show its backticks)
    fence = _fence(text, 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text: object, info: str = "text") -> str:
    """``text`` as a fenced code block: its lines kept, nothing inside it read as Markdown or HTML."""
    body = str(text).replace("\r\n", "\n").replace("\r", "\n")
    fence = _fence(body, 3)
    return f"{fence}{info}\n{body}\n{fence}"


def no_math_html(markup: str) -> str:
    """An HTML output whose text Jupyter's MathJax leaves as it is."""
    return f"<div class='{NO_MATH}'>{markup}</div>"


def no_math_markdown(markdown: str) -> str:
    """A Markdown output whose text Jupyter's MathJax leaves as it is (the Markdown inside is still read as
    Markdown: an HTML block ends at the blank line after it)."""
    return f"<div class='{NO_MATH}'>\n\n{markdown.strip()}\n\n</div>"
