"""The task-app key the pipeline tests share (a canary: it must never appear in any output)."""

ENV_KEY = "sk_env_CANARY_pipeline_aaaaaa_7777"
