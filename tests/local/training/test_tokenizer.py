from __future__ import annotations

from synth_nb.local.training.tokenizer import IGNORE_INDEX, ByteTokenizer, encode_chat

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Bye"},
            {"role": "assistant", "content": "Ciao"}]


def test_loss_is_only_on_assistant_replies_and_their_end_token():
    tok = ByteTokenizer()
    ids, labels = encode_chat(tok, MESSAGES)
    assert len(ids) == len(labels)
    learned = [i for i, label in zip(ids, labels, strict=True) if label != IGNORE_INDEX]
    assert tok.decode(learned) == "HelloCiao"
    assert learned.count(tok.end_id) == 2
    assert all(label in (IGNORE_INDEX, i) for i, label in zip(ids, labels, strict=True))


def test_generation_prompt_ends_with_an_open_assistant_header():
    tok = ByteTokenizer()
    ids, labels = encode_chat(tok, MESSAGES[:2], add_generation_prompt=True)
    assert ids[-1] == tok.special_ids["<|assistant|>"]
    assert set(labels) == {IGNORE_INDEX}


def test_byte_tokenizer_round_trips_utf8_and_ignores_specials():
    tok = ByteTokenizer()
    assert tok.vocab_size == 256 + 8  # pad, bos, eos, 4 role headers, end
    assert tok.decode(tok.encode_text("héllo ✓") + [tok.end_id]) == "héllo ✓"
    assert tok.decode(tok.role_header("critic")) == "[critic]"
    _, labels = encode_chat(tok, [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]}])
    assert [label for label in labels if label != IGNORE_INDEX][:2] == list(b"ok")
