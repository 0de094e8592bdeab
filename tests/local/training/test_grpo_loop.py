from __future__ import annotations

import copy

import pytest
import torch

from synth_nb.local.training.grpo_loop import _token_logps, group_advantages, grpo_loss
from synth_nb.local.training.model_choice import choose_model
from synth_nb.local.training.models import load_model
from synth_nb.local.training.policy_service import Sample, sample_tokens, text_logit_mask
from synth_nb.local.training.tokenizer import encode_chat

pytestmark = pytest.mark.torch


def test_advantages_are_normalised_within_the_group():
    adv = group_advantages([0.0, 0.5, 1.0, 0.5])
    assert adv[0] < 0 < adv[2] and adv[1] == adv[3] == pytest.approx(0.0)
    assert sum(adv) == pytest.approx(0.0, abs=1e-6)
    assert group_advantages([0.3, 0.3, 0.3]) == [0.0, 0.0, 0.0]
    assert group_advantages([1.0]) == [0.0]


def test_a_grpo_step_makes_the_rewarded_completion_more_likely():
    loaded = load_model(choose_model(None), seed=1)
    tok = loaded.tokenizer
    prompt, _ = encode_chat(tok, [{"role": "user", "content": "Only digits."}], add_generation_prompt=True)
    good, bad = Sample(prompt, tok.encode_text("1234") + [tok.end_id]), Sample(prompt, tok.encode_text("abcd"))
    mask = text_logit_mask(loaded)
    reference = copy.deepcopy(loaded.model).eval()
    optim = torch.optim.AdamW(loaded.model.parameters(), lr=1e-3)

    def logp(sample):
        with torch.no_grad():
            values, m = _token_logps(loaded.model, [sample], 1.0, tok.pad_id, mask)
        return float((values * m).sum())

    before = logp(good) - logp(bad)
    for _ in range(5):
        loss, parts = grpo_loss(loaded.model, reference, [good, bad], [1.0, -1.0], beta=0.05, temperature=1.0,
                                pad_id=tok.pad_id, logit_mask=mask)
        optim.zero_grad()
        loss.backward()
        optim.step()
    assert torch.isfinite(loss)
    assert parts["kl"] > 0
    assert logp(good) - logp(bad) > before + 1.0


def test_sampling_respects_the_text_mask_and_stops_on_the_end_token():
    loaded = load_model(choose_model(None), seed=2)
    tok = loaded.tokenizer
    prompt, _ = encode_chat(tok, [{"role": "user", "content": "hi"}], add_generation_prompt=True)
    allowed = set(tok.text_token_ids())
    seqs = sample_tokens(loaded.model, prompt, 4, 6, 1.0, {tok.end_id}, torch.Generator().manual_seed(0),
                         text_logit_mask(loaded))
    assert len(seqs) == 4
    for seq in seqs:
        assert 1 <= len(seq) <= 6 and set(seq) <= allowed
        assert tok.end_id not in seq[:-1]
    greedy = sample_tokens(loaded.model, prompt, 2, 6, 0.0, {tok.end_id}, None, text_logit_mask(loaded))
    assert greedy[0] == greedy[1]
