"""Offline proposer rewrites and the interceptor's candidate substitution."""

from __future__ import annotations

import random

from synth_nb.local.executors.prompt_learning.proposers import Proposer, offline_rewrite
from synth_nb.local.executors.prompt_learning.router import (
    CandidateRouter,
    render_sections,
    substitute_messages,
)
from synth_nb.local.executors.prompt_learning.settings import Message, ProposerSpec
from synth_nb.local.policies.keyword import KeywordPolicy

BASE = "Classify the query."


def test_offline_rewrite_adds_failed_queries_to_the_gold_intent() -> None:
    text = offline_rewrite(BASE, [("The ATM ate my card!", "card_swallowed")])
    assert text == "Classify the query.\n\nIntents:\n- card_swallowed: the atm ate my card"
    again = offline_rewrite(text, [("my pin is wrong", "change_pin"), ("The ATM ate my card!", "card_swallowed")])
    assert again.endswith("- card_swallowed: the atm ate my card\n- change_pin: my pin is wrong")
    assert offline_rewrite(again, []) == again


def test_offline_rewrite_caps_phrases_and_words() -> None:
    failures = [(f"query number {i} " + "word " * 20, "x_label") for i in range(12)]
    text = offline_rewrite(BASE, failures, max_per_intent=3)
    line = text.splitlines()[-1]
    assert line.count(";") == 2 and all(len(p.split()) <= 12 for p in line.split(": ", 1)[1].split("; "))


def test_offline_proposer_grounds_on_solved_examples_only_when_something_failed() -> None:
    proposer = Proposer(ProposerSpec())
    solved = {"query": "change my pin", "expected": "change_pin", "correct": True}
    failed = {"query": "atm kept card", "expected": "card_swallowed", "correct": False}
    assert proposer.rewrite(BASE, [solved]) == BASE
    text = proposer.rewrite(BASE, [solved, failed])
    assert text.index("card_swallowed") < text.index("change_pin")
    variants = proposer.instruction_variants(BASE, [solved, failed, {**failed, "query": "machine took card"}], 3,
                                             random.Random(0))
    assert variants[0] == BASE and len(set(variants)) == len(variants) >= 2


BASELINE = [Message("system", "You classify.", 0, "system"),
            Message("user", "Customer Query: {query}\n\nIntents:\n{available_intents}", 1, None)]


def test_substitution_replaces_rewritable_messages_only() -> None:
    rendered = [{"role": "system", "content": "You classify."},
                {"role": "user", "content": "Customer Query: hi\n\nIntents:\n- a"}]
    out = substitute_messages(rendered, BASELINE, {"system": "Better instruction."})
    assert out[0]["content"] == "Better instruction." and out[1] == rendered[1]
    assert substitute_messages(rendered, BASELINE, {"system": "You classify."}) == rendered


def test_wildcards_are_carried_into_the_candidate() -> None:
    baseline = [Message("system", "Pick one of: {labels}.", 0, "system")]
    rendered = [{"role": "system", "content": "Pick one of: a, b."}]
    out = substitute_messages(rendered, baseline, {"system": "Answer with exactly one of {labels}!"})
    assert out[0]["content"] == "Answer with exactly one of a, b!"


def test_router_serves_one_url_per_candidate_and_counts_tokens() -> None:
    served = []

    def serve(handler):
        served.append(handler)
        return f"http://backend/v1/policies/p{len(served)}"

    router = CandidateRouter(serve, KeywordPolicy(), BASELINE)
    first = router.url_for({"system": "A"})
    assert router.url_for({"system": "A"}) == first != router.url_for({"system": "B"})
    reply = served[0]({"messages": [{"role": "system", "content": "You classify."},
                                    {"role": "user", "content": "Customer Query: change pin\n\nIntents:\n- change_pin"}]})
    assert reply["choices"][0]["message"]["content"] == "change_pin"
    assert router.calls == 1 and router.prompt_tokens > 0
    assert render_sections(BASELINE, {"system": "A"})[0] == {"role": "system", "name": "system", "content": "A"}
