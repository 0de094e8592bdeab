"""``synth_nb.markup``: whatever a backend sends, the Markdown or HTML it is written into shows it as text.

Checked by rendering, not by looking at the escapes: markdown-it (CommonMark with GitHub's tables and
strike-through, raw HTML allowed, as Jupyter renders an output made in the session) turns the Markdown into
HTML, and an HTML parser says which elements it holds and what text it shows.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from synth_nb.markup import html_text, md_block, md_code, md_text, no_math_html, no_math_markdown

MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

#: text a backend might send, markup-heavy: every character Markdown or HTML gives a meaning to, and letters
BACKEND_TEXT = st.lists(st.sampled_from([*"\\`*_{}[]()<>#+-.!|~$&\"'=:/; \n\tabcxyz019é→",
                                         "javascript:", "<img src=x onerror=alert(1)>", "```", "&lt;", "\r\n", "1. ",
                                         "> ", "    "]), max_size=40).map("".join)


class Page(HTMLParser):
    """The elements (tag, attributes) of an HTML fragment and the text it shows."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text = ""
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text += data

    @property
    def tags(self) -> set[str]:
        return {tag for tag, _ in self.elements}


def rendered(markdown: str) -> Page:
    return Page(MARKDOWN.render(markdown))


def _one_line(text: str) -> str:
    return " ".join(text.split())


@given(BACKEND_TEXT)
def test_inline_text_shows_as_itself_and_makes_no_element(text: str) -> None:
    page = rendered(f"before {md_text(text)} after")
    assert page.tags <= {"p"}, page.elements
    assert _one_line(page.text) == _one_line(f"before {text} after")


@given(BACKEND_TEXT)
def test_inline_text_starting_a_line_is_no_heading_list_or_quote(text: str) -> None:
    page = rendered(md_text(text))
    assert page.tags <= {"p", "pre", "code"}, page.elements  # four leading spaces: literal code, no markup
    assert _one_line(page.text) == _one_line(text)


@given(BACKEND_TEXT, BACKEND_TEXT)
def test_a_table_cell_holds_its_text_and_only_it(left: str, right: str) -> None:
    page = rendered(f"| a | b |\n|---|---|\n| {md_text(left)} | {md_code(right, cell=True)} |\n")
    assert page.tags <= {"table", "thead", "tbody", "tr", "th", "td", "code"}, page.elements
    assert sum(tag == "td" for tag, _ in page.elements) == 2
    assert _one_line(page.text) == _one_line(f"a b {left} {right}")


@given(BACKEND_TEXT)
def test_a_code_span_cannot_be_left(text: str) -> None:
    page = rendered(f"id {md_code(text)} end")
    assert page.tags <= {"p", "code"}, page.elements
    assert _one_line(page.text) == _one_line(f"id {text} end")


@given(BACKEND_TEXT)
def test_a_fenced_block_keeps_every_line_and_cannot_be_closed_early(text: str) -> None:
    page = rendered(f"{md_block(text)}\n\nafter")
    assert page.tags == {"pre", "code", "p"}, page.elements
    assert page.text == text.replace("\r\n", "\n") + "\n\nafter\n"


@pytest.mark.parametrize("text", ["<img src=x onerror=alert(1)>", "a'b\"c", "</div><script>x</script>"])
def test_html_text_is_text_in_an_element_and_in_an_attribute(text: str) -> None:
    page = Page(f"<div title='{html_text(text)}' data-x=\"{html_text(text)}\">{html_text(text)}</div>")
    assert page.elements == [("div", {"title": text, "data-x": text})]
    assert page.text == text


def test_math_is_left_alone_where_jupyter_typesets_it() -> None:
    sent = "$x$ and \\(y\\)"
    wrapped = no_math_markdown(f"**Error:** {md_text(sent)}")
    page = rendered(wrapped)
    assert page.elements[0] == ("div", {"class": "mathjax_ignore"})
    assert sent in page.text and "strong" in page.tags  # the Markdown inside is still Markdown
    assert Page(no_math_html("<p>$x$</p>")).elements[0] == ("div", {"class": "mathjax_ignore"})
