"""Antigravity: ``~/.gemini/antigravity*/brain/<session>/.system_generated/logs/transcript*.jsonl``."""
