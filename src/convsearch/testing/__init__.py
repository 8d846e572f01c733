"""Test doubles that ship with the package: a scripted OpenAI-compatible HTTP server for loopback tests and
benchmarks (``openai_server``), next to the in-process doubles (``llm.ScriptedLLM``, ``rewrite.base.Scripted``)."""
