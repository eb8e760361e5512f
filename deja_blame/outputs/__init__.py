"""What deja hands to people and other tools: handoff prompts, reports, and their redaction."""
