"""What a change may not do: --diff-base, --baseline, --fail-on, and what a change cannot hide."""
