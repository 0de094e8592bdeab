"""Model catalogue: casing, capabilities, experimental gate, fine-tuned ids."""

from __future__ import annotations

from synth_nb.flows import catalogue


def test_canonical_casing_is_restored_case_insensitively() -> None:
    assert catalogue.canonical_model("qwen/qwen3-4b") == "Qwen/Qwen3-4B"
    assert catalogue.canonical_model("  QWEN/QWEN3-VL-8B-INSTRUCT ") == "Qwen/Qwen3-VL-8B-Instruct"
    assert catalogue.canonical_model("Qwen/Qwen2-7B") is None
    assert catalogue.canonical_model(42) is None  # type: ignore[arg-type]


def test_sft_covers_everything_and_rl_only_the_rl_subset() -> None:
    assert len(catalogue.SFT_MODELS) == len(set(catalogue.SFT_MODELS))
    assert set(catalogue.RL_MODELS) < set(catalogue.SFT_MODELS)
    for sft_only in ("Qwen/Qwen3-32B", "Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen/Qwen3-Coder-480B-A35B-Instruct",
                     "Qwen/Qwen3-VL-32B-Thinking"):
        assert catalogue.is_sft_capable(sft_only)
        assert not catalogue.is_rl_capable(sft_only)
    for rl in ("Qwen/Qwen3-0.6B", "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "Qwen/Qwen3-VL-2B-Thinking"):
        assert catalogue.is_rl_capable(rl)


def test_fine_tuned_ids_resolve_through_any_segment_after_the_first_colon() -> None:
    assert catalogue.base_model_of("rl:Qwen/Qwen3-4B:job123") == "Qwen/Qwen3-4B"
    assert catalogue.base_model_of("anything:job:qwen/qwen3-1.7b") == "Qwen/Qwen3-1.7B"
    assert catalogue.base_model_of("ft:REPLACE_WITH_MODEL_ID") is None
    assert catalogue.is_rl_capable("rl:Qwen/Qwen3-4B:job123")
    assert not catalogue.is_sft_capable("ft:Qwen/Qwen3-4B:abc")


def test_experimental_models_and_env_extension() -> None:
    assert catalogue.is_experimental("Qwen/Qwen3-4B-Thinking-2507-FP8", environ={})
    assert catalogue.is_experimental("qwen/qwen3-coder-480b-a35b-instruct", environ={})
    assert not catalogue.is_experimental("Qwen/Qwen3-4B", environ={})
    assert catalogue.is_experimental("Qwen/Qwen3-4B", environ={"SDK_EXPERIMENTAL_MODELS": "x, qwen/qwen3-4b"})
    assert not catalogue.is_experimental("not-a-model", environ={})


def test_provider_allow_lists() -> None:
    assert catalogue.check_provider_model("groq", "llama-3.1-8b-instant") is None
    assert catalogue.check_provider_model("groq", "llama-3.3-70b-versatile") is None
    assert catalogue.check_provider_model("groq", "openai/gpt-oss-120b") is None
    assert catalogue.check_provider_model("groq", "llama3-groq-70b-8192-tool-use-preview")
    assert catalogue.check_provider_model("openai", "openai/gpt-4.1-mini") is None
    assert catalogue.check_provider_model("openai", "gpt-4.1-nano") is None
    assert "nano" in (catalogue.check_provider_model("openai", "gpt-4.1-nano", allow_nano=False) or "")
    assert catalogue.check_provider_model("openai", "gpt-5-pro")
    assert catalogue.check_provider_model("google", "gemini-2.5-flash-lite") is None
    assert "unsupported provider" in (catalogue.check_provider_model("synth", "x") or "")


def test_gpu_types_match_any_casing() -> None:
    from synth_nb.flows.catalogue import GPU_TYPES, canonical_gpu_type

    assert canonical_gpu_type(" h100 ") == "H100" and canonical_gpu_type("a100-80gb") == "A100-80GB"
    assert canonical_gpu_type("TOASTER") is None and canonical_gpu_type(3) is None  # type: ignore[arg-type]
    assert len(set(GPU_TYPES)) == len(GPU_TYPES)
