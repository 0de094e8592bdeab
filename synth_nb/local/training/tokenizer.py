"""Chat formatting and tokenisation with the loss restricted to assistant tokens.

Two tokenisers share one interface: a byte-level one for the tiny random-init model (no vocabulary file,
nothing to download) and an adapter over a Hugging Face tokenizer found in a local model folder.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["ByteTokenizer", "ChatTokenizer", "HfChatTokenizer", "IGNORE_INDEX", "encode_chat"]

#: label value ignored by the loss (torch's cross_entropy default)
IGNORE_INDEX = -100
_ROLES = ("system", "user", "assistant", "tool")


class ChatTokenizer(Protocol):
    vocab_size: int
    pad_id: int
    bos_id: int | None
    #: closes every message; generation stops on it
    end_id: int

    def encode_text(self, text: str) -> list[int]: ...

    def role_header(self, role: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...


class ByteTokenizer:
    """256 byte tokens plus pad, bos, eos, one header per role and ``<|end|>``."""

    kind = "byte"

    def __init__(self) -> None:
        specials = ["<|pad|>", "<|bos|>", "<|eos|>", *(f"<|{r}|>" for r in _ROLES), "<|end|>"]
        self.special_ids = {name: 256 + i for i, name in enumerate(specials)}
        self.vocab_size = 256 + len(specials)
        self.pad_id = self.special_ids["<|pad|>"]
        self.bos_id: int | None = self.special_ids["<|bos|>"]
        self.eos_id = self.special_ids["<|eos|>"]
        self.end_id = self.special_ids["<|end|>"]

    def encode_text(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def role_header(self, role: str) -> list[int]:
        key = f"<|{role}|>"
        if key in self.special_ids:
            return [self.special_ids[key]]
        return self.encode_text(f"[{role}]")  # unusual roles keep their name as text

    def decode(self, ids: list[int]) -> str:
        return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")

    def text_token_ids(self) -> list[int]:
        """Tokens a chat policy may sample: printable ASCII, newline and tab, and ``<|end|>`` to stop."""
        return [*range(32, 127), 9, 10, self.end_id]

    def describe(self) -> dict[str, Any]:
        return {"type": "byte", "vocab_size": self.vocab_size}


class HfChatTokenizer:
    """Adapter over a tokenizer loaded from a local model folder; role headers are plain text tags."""

    kind = "hf"

    def __init__(self, tokenizer: Any) -> None:
        self.tok = tokenizer
        end = tokenizer.eos_token_id
        if end is None:
            raise ValueError("the local tokenizer has no eos token; cannot mark the end of a message")
        self.end_id = int(end)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else self.end_id
        bos = tokenizer.bos_token_id
        self.bos_id = int(bos) if bos is not None and bos != self.end_id else None
        self.vocab_size = len(tokenizer)

    def encode_text(self, text: str) -> list[int]:
        return list(self.tok(text, add_special_tokens=False)["input_ids"])

    def role_header(self, role: str) -> list[int]:
        return self.encode_text(f"<|{role}|>\n")

    def decode(self, ids: list[int]) -> str:
        return str(self.tok.decode(ids, skip_special_tokens=True))


def _content_text(content: Any) -> str:
    """Text of a message's content: strings as is, OpenAI-style parts joined, anything else as JSON-ish."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "".join(str(p) for p in parts)
    return str(content)


def encode_chat(tok: ChatTokenizer, messages: list[dict[str, Any]], *,
                add_generation_prompt: bool = False) -> tuple[list[int], list[int]]:
    """Token ids and labels for a conversation; labels are IGNORE_INDEX outside assistant replies.

    Each assistant reply is learned together with its closing ``end`` token, so the model learns to stop.
    With ``add_generation_prompt`` the sequence ends with an open assistant header (for sampling).
    """
    ids: list[int] = [tok.bos_id] if tok.bos_id is not None else []
    labels: list[int] = [IGNORE_INDEX] * len(ids)
    for message in messages:
        role = str(message.get("role") or "user")
        header = tok.role_header(role)
        body = tok.encode_text(_content_text(message.get("content"))) + [tok.end_id]
        ids += header + body
        labels += [IGNORE_INDEX] * len(header)
        labels += body if role == "assistant" else [IGNORE_INDEX] * len(body)
    if add_generation_prompt:
        header = tok.role_header("assistant")
        ids += header
        labels += [IGNORE_INDEX] * len(header)
    return ids, labels
